"""The second source article ("Birds build nests") checked from its text: both readings of
every displayed line, and which one each verdict uses.

The article lives beside the project (``../shared/articles/003_*.txt``); it is not
copied here (no licence), so these tests skip, saying so, where it is absent. Each
displayed line is recomputed below with mpmath at 50 digits, from the article's own
model (X, W_Q, W_K, W_V, √3) and its own printed literals, never from symtf: as
displayed (every literal as written) and exactly (every literal the value it is the
printed rounding of, carried through the article's earlier lines).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mpmath
import pytest
from mp_reference import rounds_to

from symtf.checking.report import Report
from symtf.commands.draft import check_article
from symtf.renderers import json as render_json

MPMATH_DIGITS = 50

ROOT = Path(__file__).resolve().parent.parent


def _article(name: str) -> Path | None:
    for base in (ROOT.parent, ROOT.parent.parent):
        p = base / "shared" / "articles" / name
        if p.exists():
            return p
    return None


BIRDS = _article("003_6b8589bde336badf.txt")
pytestmark = pytest.mark.skipif(
    BIRDS is None, reason="the source article 003_*.txt is not beside the project (../shared)"
)


@pytest.fixture(scope="module")
def birds() -> dict[str, Any]:
    from test_formats import json_validator

    assert BIRDS is not None
    data = json.loads(render_json.render(Report((check_article(BIRDS),))))
    json_validator().validate(data)
    out: dict[str, Any] = data["derivations"][0]
    return out


def _m(x: str | int) -> Any:
    return mpmath.mpf(x)


def _klass(x: Any, printed: str) -> str:
    """The verdict class of ``printed`` against ``x``, from its digits (DESIGN.md, Verdicts)."""
    decimals = len(printed.partition(".")[2])
    unit = mpmath.mpf(10) ** -decimals
    if abs(mpmath.mpf(printed) - x) < mpmath.mpf(10) ** -40:  # equal, at 50 digits
        return "exact"
    if rounds_to(x, printed):
        return "rounded"
    return "slip" if abs(mpmath.mpf(printed) - x) < unit else "wrong"


def _weights(scores: list[int]) -> list[Any]:
    """One softmax row of scores scaled by √3 (d_k = 3)."""
    e = [mpmath.exp(_m(s) / mpmath.sqrt(3)) for s in scores]
    return [x / mpmath.fsum(e) for x in e]


def _out(w: list[Any]) -> list[Any]:
    v = [[2, 2, 1], [1, 1, 2], [1, 3, 1]]  # V = X·W_V, as the article prints it (line 112)
    return [mpmath.fsum(w[i] * v[i][j] for i in range(3)) for j in range(3)]


def _expected() -> dict[int, tuple[list[Any], list[Any]]]:
    """Each displayed line's values as displayed and exactly, by article line."""
    r3 = mpmath.sqrt(3)
    e1, e2 = mpmath.exp(r3), mpmath.exp(4 / r3)  # the Birds row's scaled scores: 3/√3, 4/√3
    total = 2 * e1 + e2
    # Q·Kᵀ by the article's matrices: Birds [3, 3, 4], build [2, 1, 1], nests [3, 4, 3]
    birds_w, build_w, nests_w = _weights([3, 3, 4]), _weights([2, 1, 1]), _weights([3, 4, 3])
    a, b = _m("0.264"), _m("0.471")
    six = mpmath.sqrt(6)
    return {
        118: ([r3], [r3]),
        128: ([mpmath.exp(_m("1.732"))], [e1]),
        129: ([mpmath.exp(_m("1.732"))], [e1]),
        130: ([mpmath.exp(_m("2.309"))], [e2]),
        132: ([_m("5.652") * 2 + _m("10.068")], [total]),
        134: ([_m("5.652") / _m("21.372")], [e1 / total]),
        135: ([_m("5.652") / _m("21.372")], [e1 / total]),
        136: ([_m("10.068") / _m("21.372")], [e2 / total]),
        147: (_out([a, a, b]), _out(birds_w)),
        148: (_out([b, a, a]), _out(build_w)),
        149: (_out([a, b, a]), _out(nests_w)),
        168: ([_m(64)], [_m(64)]),
        214: ([_m(3)], [_m(3)]),
        215: ([_m(0)], [_m(0)]),
        241: ([_m(9)], [_m(9)]),
        242: ([_m(-3), _m(0), _m(3)], [_m(-3), _m(0), _m(3)]),
        243: ([_m(6)], [_m(6)]),
        244: ([six], [six]),
        246: ([-3 / _m("2.449"), _m(0), 3 / _m("2.449")], [-3 / six, _m(0), 3 / six]),
    }


#: The reading each displayed line's verdict uses, by hand: no literal standing for
#: another value (as displayed); literals the printed roundings of exact values (the exact
#: reading); 21.372, the slipped sum, carried into the weights (through the chain).
READING = {
    **dict.fromkeys((118, 168, 214, 215, 241, 242, 243, 244), "as_displayed"),
    **dict.fromkeys((128, 129, 130, 132, 147, 148, 149, 246), "exact_reading"),
    **dict.fromkeys((134, 135, 136), "through_chain"),
}


def _displayed(birds: dict[str, Any]) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {}
    for c in birds["checks"]:
        # a number a line computes from that repeats an earlier result (5.652 in
        # 5.652 / 21.372) is checked as that result, apart from the line's own readings
        if c["kind"] == "expression" and "(restated)" not in c["claim"]:
            out.setdefault(c["source_line"], []).append(c)
    return out


def test_every_displayed_line_gets_both_readings(birds: dict[str, Any]) -> None:
    lines = _displayed(birds)
    expected = _expected()
    assert sorted(lines) == sorted(expected)  # every displayed line with arithmetic, no other
    for line, (shown, exact) in expected.items():
        checks = lines[line]
        assert len(checks) == len(shown), line
        for c, x, y in zip(checks, shown, exact, strict=True):
            p = c["printed"]
            assert c["as_displayed"]["verdict"] == _klass(x, p), (line, p, "as displayed")
            assert c["exact_reading"]["verdict"] == _klass(y, p), (line, p, "exact reading")
            assert abs(_m(c["exact_reading"]["exact"]) - y) < _m(10) ** -14, (line, p)


def test_each_verdict_says_which_reading_it_uses(birds: dict[str, Any]) -> None:
    for line, checks in _displayed(birds).items():
        for c in checks:
            assert c["reading"] == READING[line], (line, c["printed"])
            used = c["as_displayed"] if c["reading"] == "as_displayed" else c["exact_reading"]
            assert c["verdict"] == used["verdict"], (line, c["printed"])
            assert c["explanation"].startswith(("as displayed", "link")), line
            if c["reading"] != "as_displayed":  # and the other reading in words too
                assert "with the unrounded values" in c["explanation"], line


def test_the_slipped_sum_is_carried_into_the_weights(birds: dict[str, Any]) -> None:
    lines = _displayed(birds)
    r3 = mpmath.sqrt(3)
    total = 2 * mpmath.exp(r3) + mpmath.exp(4 / r3)
    # 5.652 + 5.652 + 10.068 is 21.372 as written, 21.37286… exactly: a slip
    (sum_line,) = lines[132]
    assert not rounds_to(total, "21.372") and abs(_m("21.372") - total) < _m("0.001")
    assert sum_line["verdict"] == "slip" and sum_line["cause"] == "propagated-rounding"
    for line in (134, 135, 136):
        (c,) = lines[line]
        (carried,) = c["carried"]  # 5.652 and 10.068 print their exact values; 21.372 does not
        assert carried["literal"] == "21.372"
        assert carried["stands_for"] == sum_line["claim"]
        assert abs(_m(carried["value"].rstrip("…")) - total) < _m(10) ** -5
        assert c["verdict"] == "rounded" and "cause" not in c  # both readings give the weight
