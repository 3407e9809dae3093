"""Whole numbers the code decides from its translated values: the index of a largest entry.

A greedy decoding loop picks ``next_id = int(np.argmax(probs))``, then feeds that token
back, appends it, and stops on ``<EOS>``: what it computes next depends on the index, so
the loop is unrolled only once the index is known. It is known when the vector is a
translated step whose every input the code gives (array literals, seeded draws): its
entries are evaluated as certified balls from those inputs, and the index is the one
entry above every other by a margin that neither the balls' radii nor the program's own
floating-point rounding can bridge. A tie, or two entries closer than that, leaves the
index (and what depends on it) untranslated: the draft never guesses which one numpy
picked.

The values are the derivation's own: the same step text the check evaluates, on the
same given values. Nothing of the notebook is run.
"""

from __future__ import annotations

import ast
from typing import Any

from symtf.draft.templates import Call, Var, render, variables
from symtf.draft.translate.events import Given
from symtf.draft.translate.literals import Literals
from symtf.draft.translate.scope import Untranslated

__all__ = ["Decided"]

#: Working precision of the balls (bits), as the draft's search.
PREC = 128
#: The smallest margin, relative to the entries, between the largest entry and the next
#: that decides an argmax: far above float64's rounding over a short chain of ops
#: (2⁻⁵² per op) and float32's (2⁻²⁴ per op).
MARGIN64 = 1e-9
MARGIN32 = 1e-5


class Decided(Literals):
    """``np.argmax(x)`` and ``x.argmax()`` of a translated vector, as a whole number."""

    def _more_const(self, node: ast.expr) -> Any:
        decided = self._decided_index(node)
        return decided if decided is not None else super()._more_const(node)

    def _decided_index(self, node: ast.expr) -> int | None:
        """The index a name holds when its step is ``argmax`` of a one-dimensional vector
        (``next_id = int(np.argmax(probs))``, read where a number is needed: ``if next_id
        == eos``, ``E[next_id]``, ``ids.append(next_id)``); ``None``: not such a name.

        The step stays a step: only where the code needs the number is it decided.

        Raises:
            Untranslated: The vector's values are not known, or no entry is the largest
                by a certain margin.
        """
        if not isinstance(node, ast.Name) or node.id not in self.names:
            return None
        expr = self.exprs.get(self.names[node.id])
        if not (
            isinstance(expr, Call)
            and expr.op == "argmax"
            and len(expr.args) == 1
            and isinstance(expr.args[0], Var)
            and dict(expr.params).get("axis") is None
        ):
            return None
        if self._dry:
            raise Untranslated(f"{node.id}: an index decided from values, not while sizing")
        values = self._step_values(expr.args[0].name)
        shape = values.shape
        if len(shape) != 1 and not (len(shape) == 2 and shape[0] == 1):
            raise Untranslated(f"{node.id}: the argmax of a tensor of more than one row")
        return _largest(values.data, self.float32, node.id)

    def _step_values(self, name: str) -> Any:
        """The certified values of a translated step or given (balls, memoised by name)."""
        from flint import ctx

        from symtf.backends.ball import BallBackend
        from symtf.graph.evaluate import evaluate_text

        held = self._decided_values.get(name)
        if held is not None:
            return held
        order: list[str] = []
        seen: set[str] = set()

        def visit(n: str) -> None:
            if n in seen or n in self._decided_values:
                return
            seen.add(n)
            if n in self.given_events:
                order.append(n)
                return
            expr = self.exprs.get(n)
            if expr is None:
                raise Untranslated(f"{n}: its values are not known where the code needs them")
            for v in sorted(variables(expr)):
                visit(v)
            order.append(n)

        visit(name)
        saved = ctx.prec
        try:
            with BallBackend(PREC) as xp:
                for n in order:
                    if n in self.given_events:
                        self._decided_values[n] = _given(xp, self.given_events[n])
                        continue
                    expr = self.exprs[n]
                    env = {v: self._decided_values[v] for v in variables(expr)}
                    self._decided_values[n] = evaluate_text(xp, render(expr, {}), env)
        except Untranslated:
            raise
        except Exception as e:
            raise Untranslated(f"{name}: its values could not be evaluated ({e})") from None
        finally:
            ctx.prec = saved
        return self._decided_values[name]


def _given(xp: Any, g: Given) -> Any:
    from symtf.numbers import parse_exact
    from symtf.tensor import Tensor

    data = []
    for text in g.values:
        if text in ("-inf", "inf"):
            raise Untranslated("an infinite entry is not evaluated here")
        data.append(xp.const(parse_exact(text, where="literal")))
    return Tensor(g.shape if g.shape else (1,), data)


def _largest(data: list[Any], float32: bool, source: str) -> int:
    """The index of the entry above every other by the margin (raises Untranslated)."""
    from flint import arb

    if not data or not all(isinstance(x, arb) and x.is_finite() for x in data):
        raise Untranslated(f"{source}: the entries are not all finite numbers")
    best = max(range(len(data)), key=lambda i: float(data[i].mid()))
    margin = MARGIN32 if float32 else MARGIN64
    top = data[best]
    for j, x in enumerate(data):
        if j == best:
            continue
        scale = max(abs(float(top.mid())), abs(float(x.mid())), 1.0)
        if not bool(top - x > margin * scale):
            raise Untranslated(
                f"{source}: entries {best} and {j} are too close to tell which numpy picks"
            )
    return best
