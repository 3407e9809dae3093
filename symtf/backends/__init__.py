"""The number systems every op runs in, behind one protocol.

- :class:`ExactBackend`: exact SymPy arithmetic (rationals, exact ``exp``/``sqrt``, symbols).
- :class:`BallBackend`: certified python-flint balls.
- :class:`~symtf.backends.midrad.MidradBackend`: certified midpoint–radius float64 (BLAS).
- :class:`FloatBackend`: numpy float64, not certified.
"""

from symtf.backends.exact import BallBackend, ExactBackend, FloatBackend

__all__ = ["BallBackend", "ExactBackend", "FloatBackend"]
