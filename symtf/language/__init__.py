"""The languages written into derivation files, on one tokenizer and parser.

- :mod:`symtf.language.syntax`: tokens, limits, error messages and the shared parser core.
- :mod:`symtf.language.expr`: displayed arithmetic (``e^2.309``, ``5.652 / 21.372``).
- :mod:`symtf.language.lang`: steps (``softmax(Q @ K.T / sqrt(2))``).
- :mod:`symtf.language.latexmath`: LaTeX input read into displayed arithmetic.
"""
