"""Losses: cross-entropy and negative log-likelihood over target ids, binary cross-entropy, MSE."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from symtf.errors import ShapeError
from symtf.ops.array import add_all, as_int, generic, scalar
from symtf.ops.attention import log_softmax
from symtf.ops.core import Param, check, define, elementwise_shape, fmt
from symtf.ops.reductions import mean
from symtf.tensor import Tensor

if TYPE_CHECKING:
    from symtf.backends.protocol import Backend


def _int(v: Any, what: str) -> int:
    k = as_int(v)
    if k is None:
        raise ShapeError(f"{what}: expected an integer, found {v}")
    return k


def _rows(shape: Any) -> tuple[int, int]:
    check(len(shape) in (1, 2), f"expected (vocab,) or (n, vocab), found {fmt(shape)}")
    return (1, shape[0]) if len(shape) == 1 else (shape[0], shape[1])


def _nll_shape(logp: Any, target: Any) -> tuple[int, ...]:
    n, _ = _rows(logp)
    size = 1
    for k in target:
        size *= k
    check(
        size == n or (size == 1 and len(target) == 0),
        f"expected {n} target ids (one per row), found shape {fmt(target)}",
    )
    return ()


def _targets(target: Tensor, rows: int, width: int) -> list[int]:
    ids = [_int(v, "target") for v in target.data]
    if len(ids) == 1 and rows > 1 and target.ndim == 0:
        ids = ids * rows
    for k in ids:
        check(0 <= k < width, f"target {k} is outside 0..{width - 1}")
    return ids


def _picked(xp: Any, shape: tuple[int, ...], ids: list[int], width: int, each: Any) -> Tensor:
    """A tensor of ``shape`` (rows of ``width``): ``each`` at every row's target, 0 elsewhere."""
    zero = xp.const(0)
    data = [zero] * (len(ids) * width)
    for i, k in enumerate(ids):
        data[i * width + k] = each
    return Tensor(shape, data)


def _nll_vjp(
    xp: Any, g: Tensor, logp: Tensor, target: Tensor, *, output: Tensor
) -> tuple[Any, ...]:
    # −(1/n)Σ logp[r, t_r]: −g/n at each row's target; the target ids have no derivative
    n, v = _rows(logp.shape)
    ids = _targets(target, n, v)
    return _picked(xp, logp.shape, ids, v, -g.item() / xp.const(n)), None


@define(
    "nll",
    "losses",
    (Param("logp"), Param("target")),
    shape=_nll_shape,
    tex=r"-\frac{1}{n}\sum_r \log p_{r, t_r}",
    text="mean over rows of −logp[row, target]",
    shapes="(V,) or (n, V), int or (n,) → ()",
    vjp=_nll_vjp,
)
def nll(xp: Any, logp: Tensor, target: Tensor) -> Tensor:
    """Mean over rows of ``−logp[row, target]``: ``(n, V), (n,) -> ()``."""
    n, v = _rows(logp.shape)
    ids = _targets(target, n, v)
    data = logp.data
    picked = [data[i * v + k] for i, k in enumerate(ids)]
    return scalar(-add_all(xp, picked) / xp.const(n))


def _smoothed(xp: Any, shape: tuple[int, ...], ids: list[int], width: int, eps: Any) -> Tensor:
    """The smoothed targets: ``1 − ε + ε/V`` at each row's target, ``ε/V`` elsewhere."""
    one = xp.const(1)
    if eps == 0:
        return _picked(xp, shape, ids, width, one)
    e = xp.const(eps)
    rest = e / xp.const(width)
    data = [rest] * (len(ids) * width)
    for i, k in enumerate(ids):
        data[i * width + k] = one - e + rest
    return Tensor(shape, data)


def _cross_entropy_shape(logits: Any, target: Any, *, label_smoothing: Any = 0) -> tuple[int, ...]:
    check(
        0 <= label_smoothing <= 1,
        f"label_smoothing must be between 0 and 1, found {label_smoothing}",
    )
    return _nll_shape(logits, target)


def _cross_entropy_vjp(
    xp: Any,
    g: Tensor,
    logits: Tensor,
    target: Tensor,
    *,
    output: Tensor,
    label_smoothing: Any = 0,
) -> tuple[Any, ...]:
    # (g/n)·(softmax(z) − q) row by row, q the (smoothed) one-hot targets
    from symtf.ops.attention import softmax
    from symtf.ops.elementwise import sub, times

    n, v = _rows(logits.shape)
    ids = _targets(target, n, v)
    q = _smoothed(xp, logits.shape, ids, v, label_smoothing)
    diff = sub(xp, softmax(xp, logits, axis=-1), q)
    return times(xp, diff, g.item() / xp.const(n)), None


_CE = r"-\frac{1}{n}\sum_r \log \operatorname{softmax}(z_r)_{t_r}"
_CE_SMOOTHED = (
    r"-\frac{1}{n}\sum_r \sum_c q_{r,c} \log \operatorname{softmax}(z_r)_c,\quad "
    r"q_{r,c} = (1-\varepsilon)[c = t_r] + \frac{\varepsilon}{V}"
)


def _cross_entropy_display(params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    return _CE if params.get("label_smoothing", 0) == 0 else _CE_SMOOTHED


@define(
    "cross_entropy",
    "losses",
    (
        Param("logits"),
        Param("target"),
        Param("label_smoothing", "number", 0, doc="ε: each target weighs 1 − ε, every class ε/V"),
    ),
    shape=_cross_entropy_shape,
    tex=_CE,
    text="mean over rows of −Σ_c q_c·log_softmax(logits)[row, c], q = (1−ε)·one_hot(target) + ε/V",
    shapes="(V,) or (n, V), int or (n,) → ()",
    display=_cross_entropy_display,
    vjp=_cross_entropy_vjp,
)
def cross_entropy(xp: Any, logits: Tensor, target: Tensor, *, label_smoothing: Any = 0) -> Tensor:
    """Mean over rows of ``−Σ_c q_c log_softmax(logits)[row, c]``: ``(n, V), (n,) -> ()``.

    ``q`` is the one-hot target, or with ``label_smoothing`` ε, ``(1 − ε)·one_hot + ε/V``
    (PyTorch's ``F.cross_entropy(…, label_smoothing=ε)``).
    """
    logp = log_softmax(xp, logits, axis=-1)
    if label_smoothing == 0:
        return nll.compute(xp, logp, target)
    n, v = _rows(logits.shape)
    ids = _targets(target, n, v)
    e = xp.const(label_smoothing)
    data = logp.data
    picked = add_all(xp, [data[i * v + k] for i, k in enumerate(ids)])
    every = add_all(xp, list(data))
    one = xp.const(1)
    return scalar(-((one - e) * picked + e * every / xp.const(v)) / xp.const(n))


def _pair_loss_shape(a: Any, b: Any) -> tuple[int, ...]:
    elementwise_shape(a, b)
    return ()


def _nonzero(xp: Backend, v: Any) -> bool:
    return xp.sign(v) != 0


def _bce_vjp(xp: Any, g: Tensor, p: Tensor, y: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    # each term −(y ln p + (1 − y) ln(1 − p)), over N entries: by p, −y/p + (1 − y)/(1 − p);
    # by y, ln(1 − p) − ln p. A term bce leaves out (y = 0 or y = 1) has no derivative by p.
    from symtf.ops.array import unbroadcast

    shape = elementwise_shape(p.shape, y.shape)
    c = g.item() / xp.const(_count(shape))

    def by_p(a: Any, t: Any) -> Any:
        out = xp.const(0)
        if _nonzero(xp, t):
            out = out - t / a
        if _nonzero(xp, 1 - t):
            out = out + (1 - t) / (1 - a)
        return out * c

    def by_y(a: Any, t: Any) -> Any:
        xp.require_nonzero(a, "p in the derivative of bce by y (ln 0)")
        xp.require_nonzero(1 - a, "1 - p in the derivative of bce by y (ln 0)")
        return (xp.log(1 - a) - xp.log(a)) * c

    gp = unbroadcast(xp, generic(xp, by_p, p, y), p.shape)
    gy = unbroadcast(xp, generic(xp, by_y, p, y), y.shape)
    return gp, gy


def _count(shape: Any) -> int:
    n = 1
    for k in shape:
        n *= k
    return n


@define(
    "bce",
    "losses",
    (Param("p"), Param("y")),
    shape=_pair_loss_shape,
    tex=r"-\overline{y \ln p + (1-y)\ln(1-p)}",
    text="mean of −(y ln p + (1−y) ln(1−p))",
    shapes="broadcast → ()",
    vjp=_bce_vjp,
)
def bce(xp: Any, p: Tensor, y: Tensor) -> Tensor:
    """Mean of ``−(y ln p + (1 − y) ln(1 − p))`` (broadcast) ``-> ()``."""

    def one(a: Any, t: Any) -> Any:
        terms = []
        if _nonzero(xp, t):
            xp.require_nonzero(a, "p in bce (ln 0)")
            terms.append(t * xp.log(a))
        if _nonzero(xp, 1 - t):
            xp.require_nonzero(1 - a, "1 - p in bce (ln 0)")
            terms.append((1 - t) * xp.log(1 - a))
        return -add_all(xp, terms) if terms else xp.const(0)

    return mean(xp, generic(xp, one, p, y))


def _mse_vjp(xp: Any, g: Tensor, a: Tensor, b: Tensor, *, output: Tensor) -> tuple[Any, ...]:
    # mean of (a − b)² over N entries: by a, 2(a − b)/N; by b, the negative
    from symtf.ops.array import unbroadcast

    shape = elementwise_shape(a.shape, b.shape)
    c = 2 * g.item() / xp.const(_count(shape))
    d = generic(xp, lambda x, y: (x - y) * c, a, b)
    return unbroadcast(xp, d, a.shape), unbroadcast(xp, generic(xp, lambda v: -v, d), b.shape)


@define(
    "mse",
    "losses",
    (Param("a"), Param("b")),
    shape=_pair_loss_shape,
    tex=r"\overline{(a-b)^2}",
    text="mean of (a − b)²",
    shapes="broadcast → ()",
    vjp=_mse_vjp,
)
def mse(xp: Any, a: Tensor, b: Tensor) -> Tensor:
    """Mean of ``(a − b)²`` (broadcast) ``-> ()``."""
    return mean(xp, generic(xp, lambda x, y: (x - y) * (x - y), a, b))


__all__ = ["bce", "cross_entropy", "mse", "nll"]
