"""Named alternative conventions an article may have followed, as rewrites of the step graph.

Articles that get a number "wrong" often computed it correctly under another
convention: no ``√d_k``, the unbiased variance, a different ε, ``W·x`` instead
of ``x·W``. Each :class:`Switch` names one such convention, says where in a
model it can apply (:meth:`Switch.scopes`) and returns a new derivation with it
applied there (:meth:`Switch.apply`).

Most conventions are rewrites of graph nodes: the derivation records
``(name, scope)`` and :func:`symtf.graph.rewrite.apply_rewrites` sets the
parameters of the template's nodes at that scope (a head's ``sqrt_dk`` scale, a
norm's ``unbiased`` and ``eps``), or rewrites the user step's expression. Four
change the template's shape instead (``pre-norm``/``post-norm`` and where the
mask goes): they set the model's field and the template expands differently.
The claims are never touched.

Scopes are step prefixes: ``"l0.h1"`` (a head), ``"l0.ln2"`` (a norm, also
``"ln_f"`` and stand-alone norms by name), ``"l0.h0.W_Q"``/``"l0.W1"`` (a
projection), or ``""`` (the whole model).

Example:
    >>> from symtf.spec import load
    >>> d = load("derivations/i_love_ai.toml")
    >>> s = switch("no-sqrt-dk")
    >>> s.scopes(d)
    ['l0.h0', 'l0.h1', 'l0.h2']
    >>> d2 = s.apply(d, "l0.h0")   # head 0 now divides its scores by 1
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import sympy

from symtf.errors import SymtfError
from symtf.graph.rewrite import Convention, merge_switches, with_rewrite
from symtf.spec import HEAD_PROJECTIONS, Derivation, Head, Model


class ConventionError(SymtfError, ValueError):
    """A switch that does not exist, or a scope where it does not apply."""


@dataclass(frozen=True)
class Switch:
    """One named alternative convention.

    Attributes:
        name: Short name, e.g. ``no-sqrt-dk``.
        doc: One line for people.
        level: ``head``, ``norm``, ``projection`` or ``model`` (what a scope names).
    """

    name: str
    doc: str
    level: str
    _scopes: Callable[[Derivation], list[str]] = field(repr=False, compare=False)
    #: How it applies, when not as the graph rewrite of its name (symtf.graph.rewrite).
    _apply: Callable[[Derivation, str], Derivation] | None = field(
        default=None, repr=False, compare=False
    )

    def scopes(self, d: Derivation) -> list[str]:
        """Where this switch can apply and would change something (``[]`` if nowhere)."""
        return self._scopes(d)

    def apply(self, d: Derivation, scope: str) -> Derivation:
        """A new derivation with the switch applied at ``scope``; claims untouched.

        Raises:
            ConventionError: When the switch does not apply at ``scope``.
        """
        where = self.scopes(d)
        if scope not in where:
            raise ConventionError(
                f"{d.path}: {self.name} does not apply at {scope!r} "
                f"(it applies at: {', '.join(repr(s) for s in where) or 'nowhere in this model'})"
            )
        if self._apply is not None:
            return self._apply(d, scope)
        return with_rewrite(d, self.name, scope)


# ----------------------------------------------------------------------------- model access


def _with_model(d: Derivation, **changes: Any) -> Derivation:
    return dataclasses.replace(d, model=dataclasses.replace(d.model, **changes))


def _has_blocks(m: Model) -> bool:
    return m.architecture in ("decoder", "attention") and bool(m.layers)


def _heads(d: Derivation) -> Iterator[tuple[str, int, int, Head]]:
    m = d.model
    if not isinstance(m, Model) or not _has_blocks(m):
        return
    for li, layer in enumerate(m.layers):
        for hi, head in enumerate(layer.heads):
            yield f"l{li}.h{hi}", li, hi, head


def score_divisor(m: Model, head: Head) -> sympy.Expr:
    """The number a head's scores are divided by: its own scale, the model's, or √d_head."""
    if head.scale is not None:
        return head.scale
    if m.scale is not None:
        return m.scale
    return sympy.sqrt(m.d_head)


def _n_keys(d: Derivation) -> int:
    m = d.model
    if m.architecture == "attention" and m.embed is not None:
        return int(m.embed.rows)
    return len(d.tokens)


# Norms: scope -> (eps, variance, kind) and a setter.


@dataclass(frozen=True)
class _Norm:
    scope: str
    eps: sympy.Expr
    variance: str
    kind: str
    width: int


def _norms(d: Derivation) -> list[_Norm]:
    m = d.model
    out: list[_Norm] = []
    if isinstance(m, Model) and m.architecture == "decoder":
        for li, layer in enumerate(m.layers):
            for k in (1, 2):
                eps = getattr(layer, f"ln{k}_eps")
                var = getattr(layer, f"ln{k}_variance")

                out.append(
                    _Norm(
                        f"l{li}.ln{k}",
                        m.eps if eps is None else eps,
                        m.variance if var is None else var,
                        m.norm_kind,
                        m.d_model,
                    )
                )
        if m.final_norm:
            out.append(
                _Norm(
                    "ln_f",
                    m.eps if m.lnf_eps is None else m.lnf_eps,
                    m.variance if m.lnf_variance is None else m.lnf_variance,
                    m.norm_kind,
                    m.d_model,
                )
            )
    for s in m.standalone:
        if s.op not in ("layernorm", "rmsnorm"):
            continue

        out.append(_Norm(s.name, m.eps if s.eps is None else s.eps, s.variance, s.op, s.input.cols))
    return out


# Projections: scope -> matrix and a setter.


def _projections(d: Derivation) -> list[tuple[str, sympy.ImmutableMatrix]]:
    """Every projection not yet transposed, by scope (``l0.h0.W_Q``, ``l0.W1``), with its weight."""
    m = d.model
    out: list[tuple[str, sympy.ImmutableMatrix]] = []
    for scope, _, _, head in _heads(d):
        out.extend(
            (f"{scope}.{nm}", getattr(head, nm))
            for nm in HEAD_PROJECTIONS
            if nm not in head.transposed
        )
    if m.architecture in ("decoder", "attention"):
        for li, layer in enumerate(m.layers):
            names = ("W_O", "W1", "W2", "W3") if m.architecture == "decoder" else ("W_O",)
            out.extend(
                (f"l{li}.{nm}", getattr(layer, nm))
                for nm in names
                if getattr(layer, nm) is not None and nm not in layer.transposed
            )
    return out


def _transposable(w: sympy.ImmutableMatrix) -> bool:
    # Square, and not symmetric (an identity or symmetric matrix reads the same both ways).
    return bool(w.rows == w.cols and w != w.T)


# ----------------------------------------------------------------------------- switch builders


def _head_scale(name: str, doc: str, divisor: Callable[[Model, Head], sympy.Expr]) -> Switch:
    def scopes(d: Derivation) -> list[str]:
        m = d.model
        if not isinstance(m, Model):  # an encoder-decoder model: no decoder heads
            return []
        return [s for s, _, _, h in _heads(d) if score_divisor(m, h) != divisor(m, h)]

    return Switch(name, doc, "head", scopes)


def _head_field(name: str, doc: str, fld: str, value: object, extra: Callable[..., bool]) -> Switch:
    def scopes(d: Derivation) -> list[str]:
        return [s for s, _, _, h in _heads(d) if getattr(h, fld) != value and extra(d, h)]

    return Switch(name, doc, "head", scopes)


def _norm_eps(value: str) -> Switch:
    eps = sympy.Rational(value)

    def scopes(d: Derivation) -> list[str]:
        return [n.scope for n in _norms(d) if n.eps != eps]

    return Switch(
        f"eps-{value}",
        f"the norm adds ε = {value} to the variance (per norm)",
        "norm",
        scopes,
    )


def _unbiased() -> Switch:
    def scopes(d: Derivation) -> list[str]:
        return [
            n.scope
            for n in _norms(d)
            if n.kind == "layernorm" and n.variance == "biased" and n.width > 1
        ]

    return Switch(
        "unbiased-variance",
        "LayerNorm divides the squared deviations by d − 1, not d (per norm)",
        "norm",
        scopes,
    )


def _biased() -> Switch:
    def scopes(d: Derivation) -> list[str]:
        return [n.scope for n in _norms(d) if n.kind == "layernorm" and n.variance == "unbiased"]

    return Switch(
        "biased-variance",
        "LayerNorm divides the squared deviations by d, not d − 1 (per norm)",
        "norm",
        scopes,
    )


def _model_field(
    name: str,
    doc: str,
    fld: str,
    value: object,
    when: Callable[[Model], bool],
    *,
    shape: bool = False,
) -> Switch:
    """A model-wide convention: a rewrite of every node it reaches, or, with ``shape``,
    a model setting that makes the template expand into a differently shaped graph."""

    def scopes(d: Derivation) -> list[str]:
        m = d.model
        if not isinstance(m, Model) or not _has_blocks(m):
            return []
        return [""] if getattr(m, fld) != value and when(m) else []

    def reshape(d: Derivation, scope: str) -> Derivation:
        return _with_model(d, **{fld: value})

    return Switch(name, doc, "model", scopes, reshape if shape else None)


def _weights_left() -> Switch:
    def scopes(d: Derivation) -> list[str]:
        out = []
        projections = [(s, w) for s, w in _projections(d) if _transposable(w)]
        heads_seen: list[str] = []
        for s, _ in projections:
            parts = s.split(".")
            if len(parts) == 3 and parts[0] + "." + parts[1] not in heads_seen:
                heads_seen.append(parts[0] + "." + parts[1])
        for h in heads_seen:
            out.append(h)
        out.extend(s for s, _ in projections)
        return out

    return Switch(
        "weights-left",
        "a projection computed as W·x, i.e. x·Wᵀ (per head or per projection; square, non-symmetric W only)",
        "projection",
        scopes,
    )


def _always(*_: object) -> bool:
    return True


def _k_shape_allows(d: Derivation, h: Head) -> bool:
    return d.model.d_head == _n_keys(d)


_MODEL_SWITCHES: tuple[Switch, ...] = (
    _head_scale(
        "no-sqrt-dk", "scores are not divided by √d_k (per head)", lambda m, h: sympy.Integer(1)
    ),
    _head_scale(
        "sqrt-dmodel",
        "scores are divided by √d_model instead of √d_k (per head)",
        lambda m, h: sympy.sqrt(m.d_model),
    ),
    _head_scale(
        "divide-by-dk",
        "scores are divided by d_k instead of √d_k (per head)",
        lambda m, h: sympy.Integer(m.d_head),
    ),
    _unbiased(),
    _biased(),
    _norm_eps("1e-5"),
    _norm_eps("1e-6"),
    _norm_eps("1e-12"),
    _model_field(
        "pre-norm",
        "each norm comes before its sublayer (x + f(norm(x))), GPT-2 style (model)",
        "norm",
        "pre",
        lambda m: m.architecture == "decoder",
        shape=True,
    ),
    _model_field(
        "post-norm",
        "each norm comes after its residual add (norm(x + f(x))), as in Vaswani et al. (model)",
        "norm",
        "post",
        lambda m: m.architecture == "decoder",
        shape=True,
    ),
    _model_field(
        "gelu-tanh",
        "GELU computed with the tanh approximation (model, when the FFN uses GELU)",
        "activation",
        "gelu_tanh",
        lambda m: m.architecture == "decoder" and m.activation == "gelu",
    ),
    _model_field(
        "gelu-erf",
        "GELU computed exactly with erf (model, when the FFN uses GELU)",
        "activation",
        "gelu",
        lambda m: m.architecture == "decoder" and m.activation == "gelu_tanh",
    ),
    _head_field(
        "k-not-transposed",
        "scores computed as Q·K instead of Q·Kᵀ (per head; only when d_k equals the number of keys)",
        "transpose_k",
        False,
        _k_shape_allows,
    ),
    _weights_left(),
    _model_field(
        "mask-missing",
        "no causal mask: every token attends to every token (model)",
        "mask",
        "none",
        _always,
        shape=True,
    ),
    _model_field(
        "mask-after-softmax",
        "softmax without the mask, then the future zeroed and each row renormalised (model)",
        "mask",
        "causal-after-softmax",
        lambda m: m.mask == "causal",
        shape=True,
    ),
    _model_field(
        "mask-after-softmax-unnormalized",
        "softmax without the mask, then the future zeroed and rows left unnormalised (model)",
        "mask",
        "causal-after-softmax-unnormalized",
        lambda m: m.mask == "causal",
        shape=True,
    ),
    _head_field(
        "softmax-columns",
        "softmax taken down each column instead of along each row (per head)",
        "softmax_axis",
        "columns",
        _always,
    ),
    _model_field(
        "rope-halves",
        "rotary pairs are features (i, i + d/2), as in GPT-NeoX/LLaMA code (model, with RoPE, d_head > 2)",
        "rope_pairs",
        "halves",
        lambda m: m.positional == "rope" and m.d_head > 2,
    ),
    _model_field(
        "rope-adjacent",
        "rotary pairs are features (2i, 2i + 1), as in the RoFormer paper (model, with RoPE, d_head > 2)",
        "rope_pairs",
        "adjacent",
        lambda m: m.positional == "rope" and m.d_head > 2,
    ),
)

# User steps (symtf.graph) take the same conventions as rewrites of their expressions.
SWITCHES: tuple[Convention, ...] = merge_switches(_MODEL_SWITCHES)

_BY_NAME = {s.name: s for s in SWITCHES}


def switch(name: str) -> Convention:
    """The switch called ``name``.

    Raises:
        ConventionError: For an unknown name (with the closest known names).
    """
    try:
        return _BY_NAME[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(_BY_NAME), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ConventionError(
            f"unknown convention {name!r}{hint} (known: {', '.join(_BY_NAME)})"
        ) from None


__all__ = ["SWITCHES", "Convention", "ConventionError", "Switch", "switch"]
