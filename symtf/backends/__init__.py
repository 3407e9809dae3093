"""The number systems every op runs in, behind one protocol.

- :class:`ExactBackend`: exact SymPy arithmetic (rationals, exact ``exp``/``sqrt``, symbols).
- :class:`BallBackend`: certified python-flint balls.
- :class:`~symtf.backends.midrad.MidradBackend`: certified midpoint–radius float64 (BLAS).
- :class:`FloatBackend`: numpy float64, not certified.
"""

from symtf.backends.ball import BallBackend
from symtf.backends.base import BaseBackend
from symtf.backends.exact import ExactBackend
from symtf.backends.float64 import FloatBackend
from symtf.backends.protocol import Backend

__all__ = ["Backend", "BallBackend", "BaseBackend", "ExactBackend", "FloatBackend"]
