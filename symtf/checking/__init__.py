"""Stage 3, check: claims → verdicts, reading traces.

One verdict per printed number (exact, rounded, slip, wrong, undecided), resting on
certified enclosures; displayed arithmetic; the article's own setting (float formats,
rounded inputs); diagnosis of slips by replay and convention rewrites. It reads
:mod:`symtf.graph`, :mod:`symtf.spec` and the leaf modules; renderers read its
reports, it never imports them (except in the display hooks ``__repr__`` and
``_repr_*_`` of its results). The function :func:`symtf.check` is the API over it.

- :mod:`symtf.checking.accept`: Printed numbers the article's own setting explains, accepted
  with the reason stated.
- :mod:`symtf.checking.assertions`: Claims about decoding (``assert = "tokens" |
  "teacher-forcing"``), read from the trace.
- :mod:`symtf.checking.claims`: Which entries of a step a claim prints, for 1-D and N-D steps
  (``at``, N indices).
- :mod:`symtf.checking.compare`: Compare what an article printed with the exact values, and
  classify each number.
- :mod:`symtf.checking.diagnose`: Say why a printed number is off, and where the article's chain
  first went wrong.
- :mod:`symtf.checking.displayed`: Displayed arithmetic: check a line like ``e^2.309 ≈ 10.068``
  two ways.
- :mod:`symtf.checking.draft`: Check what can be checked in a draft derivation, and say what is
  left to map.
- :mod:`symtf.checking.evaluation`: Exact values of a derivation's steps, and where a printed
  number lies against them.
- :mod:`symtf.checking.framework`: The forward pass as an article's framework computes it, in a
  binary floating-point format.
- :mod:`symtf.checking.locate`: Locate a draft claim's printed numbers in a trace: which step
  they belong to.
- :mod:`symtf.checking.report`: What a check found: the verdict on each printed number, per
  claim, per file, per run.
- :mod:`symtf.checking.verdict`: The verdict rule: one printed number against one exact value.
"""
