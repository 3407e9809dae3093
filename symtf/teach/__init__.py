"""Teaching tools: exercise sheets with answer keys, grading, and what-if with a symbol.

- :mod:`symtf.teach.exercise` chooses which printed numbers become blanks and
  computes each blank's certified answer and worked solution.
- :mod:`symtf.teach.fresh` draws new small rational weights with the same
  structure, so every student gets different numbers.
- :mod:`symtf.teach.sheet` lays out the student sheet, the answer key and the
  student's answer template (LaTeX, HTML, TOML).
- :mod:`symtf.teach.grade` grades a student's answers and finds where their chain
  of numbers first went off.
- :mod:`symtf.teach.whatif` turns one weight into a symbol: closed forms,
  derivatives, plots and certified intervals of the symbol.
"""
