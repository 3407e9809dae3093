"""TensorFlow: its functions translated onto ops (``tf.reduce_*``, ``tf.matmul``'s flags)."""

from __future__ import annotations

import ast
import re

from symtf.draft.templates import Expr, call
from symtf.draft.translate.literals import Literals
from symtf.draft.translate.scope import Untranslated
from symtf.draft.translate.table import Translation, reduction

__all__ = ["FUNCTIONS", "Tensorflow"]

#: ``tf.*``, ``tf.math.*`` and ``tf.nn.*`` functions beyond the common table.
FUNCTIONS: dict[str, Translation] = {
    "reduce_mean": reduction("mean"),
    "reduce_sum": reduction("sum"),
    "reduce_max": reduction("max"),
    "reduce_variance": reduction("var"),
    "reduce_std": reduction("std"),
}


#: TensorFlow's random draws of real numbers (float32 unless a ``dtype`` says otherwise).
_DRAWS = re.compile(r"tensorflow\.random\.(?:stateless_)?(?:normal|uniform|truncated_normal)")
#: numpy's random draws of real numbers (float64 unless cast): the legacy functions, and a
#: ``Generator``'s methods (``rng.standard_normal``) on a variable.
_NP_DRAWS = re.compile(r"numpy\.random\.(?:randn|rand|normal|uniform|standard_normal|random)")
_GENERATOR = ("standard_normal", "normal", "uniform", "random")


class Tensorflow(Literals):
    """TensorFlow's calls that need more than a table entry."""

    def _float32_draw(self, stmt: ast.stmt) -> bool:
        """Whether ``stmt`` assigns one name random values drawn in float32: TensorFlow's
        draws (``tf.random.normal((4, 1))``: its default dtype, or a stated ``tf.float32``),
        numpy's cast to float32 (``np.random.randn(4, 1).astype(np.float32)``) or drawn so
        (``rng.standard_normal(4, dtype=np.float32)``). The code then computes in float32
        (TensorFlow keeps a tensor's dtype through its ops, numpy float32 with float32)."""
        if not (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Call)
        ):
            return False
        value = stmt.value
        dotted = self._dotted(value.func) or ""
        if (
            dotted == "tensorflow.Variable"
            and value.args
            and isinstance(value.args[0], ast.Call)
            and all(kw.arg != "dtype" or self._float32_name(kw.value) for kw in value.keywords)
        ):
            value = value.args[0]  # tf.Variable(tf.random.normal(…)): the draw's dtype
            dotted = self._dotted(value.func) or ""
        dtype = next((kw.value for kw in value.keywords if kw.arg == "dtype"), None)
        if _DRAWS.fullmatch(dotted):
            drawn = dtype is None or self._float32_name(dtype)
        elif (
            isinstance(value.func, ast.Attribute)
            and value.func.attr == "astype"
            and len(value.args) == 1
            and isinstance(value.func.value, ast.Call)
        ):  # np.random.randn(4, 1).astype(np.float32)
            drawn = self._numpy_random_call(value.func.value) and self._float32_name(value.args[0])
        else:  # rng.standard_normal((4, 1), dtype=np.float32)
            drawn = (
                self._numpy_random_call(value) and dtype is not None and self._float32_name(dtype)
            )
        self.float32 |= drawn
        return drawn

    def _numpy_random_call(self, node: ast.Call) -> bool:
        """Whether a call draws numpy random reals (the legacy functions or a generator's)."""
        dotted = self._dotted(node.func) or ""
        return bool(_NP_DRAWS.fullmatch(dotted)) or (
            isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.attr in _GENERATOR
            and dotted == f"{node.func.value.id}.{node.func.attr}"  # a variable, not a module
        )

    def _float32_name(self, node: ast.expr) -> bool:
        """``tf.float32``, ``np.float32`` or ``"float32"``."""
        if isinstance(node, ast.Constant):
            return node.value == "float32"
        return (self._dotted(node) or "").endswith(".float32")

    def _tf_matmul(self, node: ast.Call) -> Expr:
        """``tf.matmul(a, b, transpose_a=…, transpose_b=…)``: a matmul of the (transposed) operands."""
        flags = {"transpose_a": False, "transpose_b": False}
        for kw in node.keywords:
            if kw.arg not in flags or not (
                isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, bool)
            ):
                raise Untranslated(f"the argument {kw.arg}= of matmul is not translated")
            flags[kw.arg] = kw.value.value
        a, b = (self._operand(x) for x in node.args)
        if flags["transpose_a"]:
            a = call("T", a)
        if flags["transpose_b"]:
            b = call("T", b)
        return call("matmul", a, b)

    def _tf_cast(self, node: ast.Call) -> Expr:
        """``tf.cast(x, dtype=tf.float32)``: x itself, stored as float32 (or float64); a cast
        to whole numbers, which truncates, is not translated."""
        dtype = node.args[1] if len(node.args) == 2 else None
        for kw in node.keywords:
            if kw.arg != "dtype" or dtype is not None:
                raise Untranslated(f"the argument {kw.arg}= of cast is not translated")
            dtype = kw.value
        name = (self._dotted(dtype) or "") if dtype is not None else ""
        if len(node.args) not in (1, 2) or not name.endswith(("float32", "float64", "double")):
            raise Untranslated(f"tf.cast to {name or 'a dtype not written out'} is not translated")
        self.float32 |= name.endswith("float32")
        return self._operand(node.args[0])
