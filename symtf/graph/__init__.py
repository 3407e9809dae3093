"""The step graph: given tensors and named steps, evaluated in any backend.

- :mod:`symtf.graph.tensor`: an N-D array of backend scalars.
- :mod:`symtf.graph.lang`: the step expression language (parse, LaTeX).
- :mod:`symtf.graph.spec`: ``[tensors]`` and ``[steps]`` → frozen data.
- :mod:`symtf.graph.ops`: every step op once, against the backend ``xp``.
- :mod:`symtf.graph.evaluate`: the user steps after the template nodes, into a trace.
- :mod:`symtf.graph.rewrite`: conventions as rewrites of user steps.
"""
