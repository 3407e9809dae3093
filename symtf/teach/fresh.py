"""Fresh numbers for an exercise: the same model structure, new small rational weights.

The structure is kept: the architecture and its settings, the input tokens,
every matrix that is the identity, all zeros or all ones, and every zero
entry (which features a head reads). Every other entry is drawn afresh from
one-decimal values (positive where the original matrix had only positive
entries). The draw is seeded, so a seed gives the same exercise on any machine.

A draw is degenerate, and drawn again, when the forward pass is undefined (a
LayerNorm row of variance 0 with ε = 0), when a norm row is constant even with
ε > 0, when an argmax the derivation prints is a tie, or when an exact value
falls on a rounding tie at the printed precision (the key must not depend on
the rounding rule).

The fresh derivation's claims print the correctly rounded fresh values (and
exact values exactly, when they are short decimals); displayed arithmetic and
notes, which quote the article's own numbers, are dropped.
"""

from __future__ import annotations

import dataclasses
import random
import tomllib
from fractions import Fraction
from typing import Any

import sympy

from symtf.checking.evaluation import Evaluator, _fit, correct_rounding, selection
from symtf.errors import ModelError, SpecError, SymtfError, Undecided
from symtf.numbers import format_fixed, toml_float
from symtf.spec import Derivation, Model, loads
from symtf.teach.tomlout import dumps

#: Draws tried before giving up.
MAX_ATTEMPTS = 60
#: Largest numerator of a drawn weight (weights are k/10).
MAX_NUMERATOR = 15
#: Most decimals used to print a short exact value exactly.
EXACT_DECIMALS = 4

_MODEL_MATS = ("embed", "pos", "unembed")
_LAYER_MATS = ("W_O", "b_O", "W1", "b1", "W2", "b2", "W3", "b3")
_HEAD_MATS = ("W_Q", "W_K", "W_V", "b_Q", "b_K", "b_V")


class FreshError(SymtfError, ValueError):
    """No fresh draw could be made for this derivation."""


def _matrix_text(m: sympy.MatrixBase) -> str:
    rows = []
    for i in range(m.rows):
        rows.append(" ".join(_num(m[i, j]) for j in range(m.cols)))
    return "\n".join(rows) + "\n"


def _num(e: sympy.Expr) -> str:
    q = Fraction(int(e.p), int(e.q))
    for n in range(0, 30):
        if (q * 10**n).denominator == 1:
            return format_fixed(q, n)
    return f"{q.numerator}/{q.denominator}"


def _structural(m: sympy.MatrixBase) -> bool:
    if all(x == 0 for x in m) or all(x == 1 for x in m):
        return True
    return bool(m.rows == m.cols and m == sympy.eye(m.rows))


def _draw(m: sympy.MatrixBase, rng: random.Random, where: str) -> sympy.ImmutableMatrix:
    if not all(x.is_Rational for x in m):
        raise FreshError(f"{where}: --fresh needs numeric weights, found a symbol")
    positive = all(x >= 0 for x in m)
    choices = [k for k in range(-MAX_NUMERATOR, MAX_NUMERATOR + 1) if k and (k > 0 or not positive)]
    return sympy.ImmutableMatrix(
        m.rows,
        m.cols,
        [0 if x == 0 else sympy.Rational(rng.choice(choices), 10) for x in m],
    )


def _redraw_raw(raw: dict[str, Any], d: Derivation, rng: random.Random) -> dict[str, Any]:
    """A copy of the file's data with every non-structural weight drawn afresh."""
    m = d.model
    if not isinstance(m, Model) or m.architecture not in ("decoder", "attention"):
        raise FreshError(
            f"{d.path}: --fresh supports decoder and attention-only models, found {m.architecture!r}"
        )
    out = dict(raw)
    model = dict(raw["model"])
    out["model"] = model
    for k in _MODEL_MATS:
        v = getattr(m, k)
        if k in model and v is not None and not (k == "unembed" and m.tied) and not _structural(v):
            model[k] = _matrix_text(_draw(v, rng, f"{d.path}: model.{k}"))
    layers = []
    for li, (lraw, layer) in enumerate(zip(raw["model"].get("layers", []), m.layers, strict=True)):
        lr = dict(lraw)
        for k in _LAYER_MATS:
            v = getattr(layer, k, None)
            if k in lr and v is not None and not _structural(v):
                lr[k] = _matrix_text(_draw(v, rng, f"{d.path}: model.layers[{li}].{k}"))
        heads = []
        for hi, (hraw, head) in enumerate(zip(lraw.get("heads", []), layer.heads, strict=True)):
            hr = dict(hraw)
            for k in _HEAD_MATS:
                v = getattr(head, k, None)
                if k in hr and v is not None and not _structural(v):
                    hr[k] = _matrix_text(
                        _draw(v, rng, f"{d.path}: model.layers[{li}].heads[{hi}].{k}")
                    )
            heads.append(hr)
        lr["heads"] = heads
        layers.append(lr)
    model["layers"] = layers
    return out


def _printed_text(q: Any, decimals: int, rounding: str) -> tuple[str, int] | None:
    """The fresh printed value of one entry and its decimals; ``None`` on a tie or undecided."""
    e, _ = q.exact()
    if e == sympy.S.NegativeInfinity:
        return "-inf", decimals
    if e.is_Rational:
        v = Fraction(int(e.p), int(e.q))
        for n in range(decimals, max(decimals, EXACT_DECIMALS) + 1):
            if (v * 10**n).denominator == 1:
                return format_fixed(v, n), n
        if (v * 10**decimals * 2).denominator == 1:
            return None  # exactly halfway at the printed precision (it has more decimals)
    r = correct_rounding(q, decimals, rounding)
    if r is None:
        return None
    return format_fixed(r, decimals), decimals


def _claims(
    raw_claims: list[dict[str, Any]], d: Derivation, ev: Evaluator
) -> list[dict[str, Any]] | None:
    """Claims printing the fresh values; ``None`` when the draw is degenerate."""
    trace = ev.exact_trace()
    out = []
    for raw, c in zip(raw_claims, d.claims, strict=True):
        if c.expression is not None or c.assertion is not None:
            continue
        new = {k: v for k, v in raw.items() if k not in ("note", "printed", "decimals")}
        rounding = "half-up" if c.rounding == "any" else c.rounding
        if c.word is not None:
            word = _word(c, ev, d)
            if word is None:
                return None
            new["printed"] = word
            out.append(new)
            continue
        if c.step is None:  # the rest are step claims: each names its step
            continue
        shape = trace.shape(c.step)
        if shape is None:
            continue
        sel = selection(c, shape)
        if c.reduce is not None:
            from symtf.checking.compare import _reduced

            try:
                q = _reduced(c.reduce, [ev.entry(c.step, i, j) for row in sel for (i, j) in row])
            except Undecided:
                return None
            p = c.printed[0][0]
            got = _printed_text(q, p.decimals, rounding)
            if got is None:
                return None
            new["printed"] = got[0]
            out.append(new)
            continue
        pairs = _fit(c, sel)
        cols = len(c.printed[0])
        texts: list[tuple[str, int]] = []
        rational = True  # every printed fraction's entry is still rational
        for (i, j), p in pairs:
            q = ev.entry(c.step, i, j)
            if p.is_fraction:
                e, _ = q.exact()
                if not e.is_Rational:
                    rational = False
                    break
                texts.append((f"{e.p}/{e.q}" if e.q != 1 else str(e.p), 0))
                continue
            got = _printed_text(q, p.decimals, rounding)
            if got is None:
                return None
            texts.append(got)
        if not rational:
            continue
        width = max(n for _, n in texts)
        cells = [
            t if t == "-inf" or "/" in t else format_fixed(Fraction(t), width) for t, _ in texts
        ]
        new["printed"] = "\n".join(
            " ".join(cells[r * cols : (r + 1) * cols]) for r in range(len(cells) // cols)
        ) + ("\n" if len(cells) > cols else "")
        if width:
            new["decimals"] = width
        out.append(new)
    return out


def _word(c: Any, ev: Evaluator, d: Derivation) -> str | None:
    """The word at the claim's rank, or ``None`` when a tie reaches that rank."""
    from symtf.checking.compare import _ranking

    source = "logits" if c.step == "next_token" else c.step
    rank = 1 if c.step == "next_token" else (c.rank or 1)
    t = ev.exact_trace()
    shape = t.shape(source)
    if shape is None:
        return None
    groups = _ranking([ev.entry(source, 0, j) for j in range(shape[1])])
    if groups is None:
        return None
    seen = 0
    for g in groups:
        if len(g) > 1 and seen < rank:
            return None  # a tie at or above the printed rank
        seen += len(g)
        if seen >= rank:
            return d.model.vocab[g[0]]
    return None


def _constant_norm_row(ev: Evaluator) -> bool:
    t = ev.exact_trace()
    for name in t:
        if name.endswith((".var", ".ms")):
            v = t.value(name)
            for i in range(v.rows):
                q = ev.entry(name, i, 0)
                if q.locate(Fraction(0)) == 0:
                    return True
    return False


def fresh(text: str, d: Derivation, seed: int) -> tuple[str, Derivation]:
    """A fresh derivation with the structure of ``d`` (its file text is ``text``).

    Returns:
        The fresh derivation's TOML text and the loaded derivation.

    Raises:
        FreshError: When the model is not supported or every draw was degenerate.
    """
    raw = tomllib.loads(text, parse_float=toml_float)
    rng = random.Random(f"symtf-fresh-{seed}")
    for _attempt in range(MAX_ATTEMPTS):
        data = _redraw_raw(raw, d, rng)
        data.pop("claims", None)
        data["title"] = f"{d.title} (fresh numbers, seed {seed})"
        data["source"] = f"symtf exercise --fresh --seed {seed}, from: {d.title}"
        try:
            base = loads(dumps(data), d.path)
            base = dataclasses.replace(base, claims=d.claims)
            ev = Evaluator(base)
            ev.exact_trace()
            if _constant_norm_row(ev):
                continue
            claims = _claims(raw.get("claims", []), base, ev)
        except (ModelError, Undecided):
            continue
        if claims is None:
            continue
        data["claims"] = claims
        out = (
            f"# Fresh numbers for an exercise: symtf exercise --fresh --seed {seed}.\n"
            "# Same structure as the original; weights drawn at random, values computed exactly.\n"
            + dumps(data)
        )
        try:
            return out, loads(out, d.path)
        except SpecError as e:  # a bug: the writer and the reader disagree
            raise FreshError(f"the fresh derivation does not read back: {e}") from None
    raise FreshError(f"{d.path}: no non-degenerate draw in {MAX_ATTEMPTS} attempts (seed {seed})")


__all__ = ["FreshError", "fresh"]
