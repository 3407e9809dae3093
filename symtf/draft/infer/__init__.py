"""Inferring steps: the step behind each printed number, from the article's text and numbers.

Hypotheses come from the text: the article's formulas (:mod:`.formula`) read as the
steps they may mean (:mod:`.stated`). Evidence comes from the numbers: candidate steps
over the tensors known so far (:mod:`.candidates`), screened in float64
(:mod:`.prefilter`) and certified in balls against the printed entries
(:mod:`.evidence`). A notebook's code states its own steps (:mod:`.code`); what a
printed number stands for, from the printings around it, is :mod:`.literals`. The search
(:mod:`.search`) takes the printings in the article's order; :mod:`.target` holds what
all of them work on, :mod:`.state` the tensors known and their values.
"""
