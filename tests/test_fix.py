"""``symtf check --fix`` / ``--diff`` and :mod:`symtf.fix`: edits at the numbers' places.

Expected values come from how each case is built: the numbers a test mutates and the
correct roundings it computes itself (mpmath at 50 digits), never from symtf's output.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from symtf import fix
from symtf.checking.report import Report
from symtf.commands.draft import check_article_text
from symtf.commands.fixing import check_text
from symtf.renderers.json import report_dict

ROOT = Path(__file__).resolve().parent.parent
MPMATH_DIGITS = 50


def _article(name: str) -> Path | None:
    for base in (ROOT.parent, ROOT.parent.parent):
        p = base / "shared" / "articles" / name
        if p.exists():
            return p
    return None


SEED = _article("000_b60c289f27ab6d88.txt")
needs_seed = pytest.mark.skipif(
    SEED is None, reason="the source articles (../shared/articles) are not beside the project"
)


def _symtf(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "symtf", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
    )


# ----------------------------------------------------------------------------- spelling


@pytest.mark.parametrize(
    ("old", "value", "new"),
    [
        ("-2.049", "-2.048", "-2.048"),
        ("−2.049", "-2.048", "−2.048"),  # the article's own minus sign is kept
        ("–0.50", "-0.51", "–0.51"),
        ("+0.25", "0.26", "+0.26"),
        ("0.496", "0.497", "0.497"),
        ("9.99", "10.00", "10.00"),
        ("0.060", "0.059", "0.059"),
        ("6.3379e-02", "0.063380", "6.3380e-02"),
        ("9.99E+01", "100.0", "1.00E+02"),
        ("42.0%", "0.419", "41.9%"),
        ("3", "4", "4"),
    ],
)
def test_a_new_number_is_written_as_the_old_one_was(old: str, value: str, new: str) -> None:
    assert fix.spell(old, Fraction(value)) == new


@pytest.mark.parametrize(
    ("old", "value"),
    [
        ("0.54", "0.541"),  # needs a digit the print does not show
        ("5/6", "1"),  # an exact fraction is not a rounding
        ("1,234.5", "1234.6"),  # a grouping the writer cannot keep
        ("-inf", "0"),
        ("0.5 ", "0.6"),  # the range holds more than the number
    ],
)
def test_a_spelling_that_cannot_be_kept_is_refused(old: str, value: str) -> None:
    assert fix.spell(old, Fraction(value)) is None


# ----------------------------------------------------------------------------- applying


def test_apply_changes_only_the_ranges_and_keeps_every_other_byte() -> None:
    text = "a 0.50 b\r\nc −1.25 d 7\n\nlast 0.1"
    edits = [
        fix.Edit(1, 3, 7, "0.50", "0.51"),
        fix.Edit(2, 3, 8, "−1.25", "−1.26"),
        fix.Edit(2, 11, 12, "7", "10"),
        fix.Edit(4, 6, 9, "0.1", "0.2"),
    ]
    assert fix.apply(text, edits) == "a 0.51 b\r\nc −1.26 d 10\n\nlast 0.2"


def test_apply_refuses_a_range_that_no_longer_holds_the_number() -> None:
    with pytest.raises(Exception, match=r"expected '0\.50', found '0\.55'"):
        fix.apply("x 0.55\n", [fix.Edit(1, 3, 7, "0.50", "0.51")])
    with pytest.raises(Exception, match="overlap"):
        fix.apply("0.123", [fix.Edit(1, 1, 4, "0.1", "0.2"), fix.Edit(1, 3, 6, "123", "124")])


def test_the_diff_is_unified_and_escapes_control_characters() -> None:
    out = fix.unified_diff("post.md", "x\x1b[2J 0.5\ny\n", "x\x1b[2J 0.6\ny\n")
    assert out.splitlines()[:2] == ["--- a/post.md", "+++ b/post.md"]
    assert "-x\\x1b[2J 0.5" in out and "+x\\x1b[2J 0.6" in out and "\x1b" not in out


# ----------------------------------------------------------------------------- derivation files

SELF_ATTENTION = ROOT / "derivations" / "steps_self_attention_noproj.toml"


def _mutated(tmp_path: Path) -> tuple[Path, str, str]:
    """The bundled self-attention example with one wrong and one slipped number.

    ``0.731`` (attention weight [1, 1]) becomes ``0.732`` and ``0.612`` (output [2, 3])
    becomes ``0.613``; both were computed independently (mpmath) when the example was
    written, and ``_exact_noproj`` below confirms them.
    """
    good = SELF_ATTENTION.read_text(encoding="utf-8")
    bad = good.replace("0.060 0.731 0.209", "0.060 0.732 0.209").replace(
        "0.575 1.224 0.201 0.612", "0.575 1.224 0.201 0.613"
    )
    assert bad.count("\n") == good.count("\n") and bad != good
    path = tmp_path / "attention.toml"
    path.write_bytes(bad.encode("utf-8"))
    return path, good, bad


def _exact_noproj() -> tuple[mpmath.mpf, mpmath.mpf]:
    """alpha[1][1] and out[2][3] of softmax(X Xᵀ / 2) X, at 50 digits."""
    X = [[1, 0, 1, 0], [0, 2, 0, 1], [1, 1, 0, mpmath.mpf("0.5")]]
    s = [[sum(a * b for a, b in zip(r, q, strict=True)) / 2 for q in X] for r in X]
    alpha = []
    for row in s:
        e = [mpmath.exp(v) for v in row]
        alpha.append([v / sum(e) for v in e])
    out23 = sum(alpha[2][k] * X[k][3] for k in range(3))
    return alpha[1][1], out23


def test_the_mutated_numbers_are_off_by_construction() -> None:
    a11, out23 = _exact_noproj()
    assert mpmath.nstr(a11, 3) == "0.731" and abs(mpmath.mpf("0.732") - a11) >= mpmath.mpf("0.001")
    assert mpmath.nstr(out23, 3) == "0.612" and abs(mpmath.mpf("0.613") - out23) < 0.001


def test_fix_rewrites_a_derivations_printed_numbers_and_nothing_else(tmp_path: Path) -> None:
    path, good, _ = _mutated(tmp_path)
    r = _symtf("check", str(path), "--fix")
    assert r.returncode == 0, r.stderr
    assert path.read_bytes() == good.encode("utf-8")  # byte for byte the hand-checked file
    assert "fixed 2 number(s)" in r.stderr and "0.732 → 0.731" in r.stderr
    assert "all printed numbers check out" in r.stdout
    again = _symtf("check", str(path))
    assert again.returncode == 0


def test_fix_spells_out_control_characters_in_what_it_says(tmp_path: Path) -> None:
    """What ``--fix`` says on stderr carries labels and the file's name: an escape sequence
    in either (``ESC ]0;…BEL`` retitles the terminal) is spelled out, as in every message."""
    _, _, bad = _mutated(tmp_path)
    hostile = tmp_path / "at\x1b]0;PWNED\x07tention.toml"
    hostile.write_bytes(
        bad.replace('label = "attention weights"', 'label = "attention\\u001b]0;PWNED\\u0007"')
        .replace('label = "output"', 'label = "out\\u202eput"')
        .encode("utf-8")
    )
    r = _symtf("check", str(hostile), "--fix")
    assert r.returncode == 0, r.stderr
    assert "fixed 2 number(s)" in r.stderr and "0.732 → 0.731" in r.stderr
    for stream in (r.stderr, r.stdout):
        assert not any(ch in stream for ch in "\x1b\x07\u202e"), stream
    assert "\\x1b]0;PWNED\\x07" in r.stderr


def test_diff_shows_the_fix_and_writes_nothing(tmp_path: Path) -> None:
    path, _, bad = _mutated(tmp_path)
    r = _symtf("check", str(path), "--diff")
    assert r.returncode == 1  # the file as it stands has numbers off
    assert path.read_bytes() == bad.encode("utf-8")
    assert "-0.060 0.732 0.209\n+0.060 0.731 0.209\n" in r.stdout
    assert "-0.575 1.224 0.201 0.613\n+0.575 1.224 0.201 0.612\n" in r.stdout
    assert r.stdout.count("\n+0") == 2


def test_fix_keeps_crlf_line_ends_and_comments(tmp_path: Path) -> None:
    path, _, bad = _mutated(tmp_path)
    crlf = bad.replace("\n", "\r\n").replace(
        'label = "output"', 'label = "output"  # 0.613 in the draft'
    )
    path.write_bytes(crlf.encode("utf-8"))
    r = _symtf("check", str(path), "--fix")
    assert r.returncode == 0, r.stderr
    expected = crlf.replace("0.060 0.732 0.209", "0.060 0.731 0.209").replace(
        "0.201 0.613\r\n", "0.201 0.612\r\n"
    )
    assert path.read_bytes() == expected.encode("utf-8")


@pytest.mark.parametrize(
    ("printed", "why"),
    [
        ('printed = "tf.Tensor([0.060 0.732 0.209], shape=(3,), dtype=float64)"', "entries"),
        ('printed = "0.060 0.732 \\u0030.209"', "escapes"),
    ],
)
def test_a_printed_string_whose_numbers_are_not_its_entries_is_left(
    tmp_path: Path, printed: str, why: str
) -> None:
    """A trailing comment with a number, an escape: the place cannot be told, nothing changes."""
    text = SELF_ATTENTION.read_text(encoding="utf-8")
    start = text.index('printed = """\n0.506')
    end = text.index('"""', start + 14) + 3
    bad = text[:start] + printed + text[end:]
    bad = bad.replace('step = "alpha"', 'step = "alpha"\nrow = 1')
    path = tmp_path / "a.toml"
    path.write_text(bad, encoding="utf-8")
    report = check_text(path, bad, None)
    plan = fix.plan(report, bad)
    assert not plan.chosen()
    assert any(why in f.message for f in plan.suggestions)


def test_a_one_line_printed_string_is_fixed_before_its_comment(tmp_path: Path) -> None:
    text = SELF_ATTENTION.read_text(encoding="utf-8")
    start = text.index('printed = """\n0.506')
    end = text.index('"""', start + 14) + 3
    bad = text[:start] + 'printed = "0.060 0.732 0.209"  # 0.732 was 0.7' + text[end:]
    bad = bad.replace('step = "alpha"', 'step = "alpha"\nrow = 1')
    path = tmp_path / "a.toml"
    path.write_text(bad, encoding="utf-8")
    plan = fix.plan(check_text(path, bad, None), bad)
    new = fix.apply(bad, [f.edit for f in plan.chosen() if f.edit])
    assert new == bad.replace('"0.060 0.732 0.209"', '"0.060 0.731 0.209"')


def test_an_inherited_number_is_fixed_only_with_its_root_and_on_request() -> None:
    root = {"claim": "scores", "step": "s", "index": [0, 1]}
    base = {"verdict": "slip", "source_line": 1, "exact_truncated": False}
    checks = [
        {
            **base,
            "claim": "scores",
            "index": [0, 1],
            "printed": "0.5",
            "expected": "0.4",
            "expected_value": "0.4",
            "exact": "0.44",
            "source_column": 1,
            "source_end_column": 4,
        },
        {
            **base,
            "claim": "weights",
            "index": [0, 1],
            "printed": "0.7",
            "expected": "0.6",
            "expected_value": "0.6",
            "exact": "0.64",
            "cause": "inherited",
            "root": root,
            "source_column": 5,
            "source_end_column": 8,
        },
    ]
    plan = fix.plan_checks("p.md", "0.5 0.7", checks)
    assert [f.edit.new for f in plan.chosen() if f.edit] == ["0.4"]
    assert [f.edit.new for f in plan.chosen(inherited=True) if f.edit] == ["0.4", "0.6"]
    unrooted = fix.plan_checks("p.md", "0.5 0.7", checks[1:])
    assert unrooted.chosen(inherited=True) == []


def test_undecided_symbolic_and_convention_numbers_are_never_rewritten() -> None:
    base = {
        "claim": "w",
        "index": None,
        "printed": "0.5",
        "expected": "0.4",
        "expected_value": "0.4",
        "exact": "0.44",
        "source_line": 1,
        "source_column": 1,
        "source_end_column": 4,
    }
    for extra in (
        {"verdict": "undecided"},
        {"verdict": "symbolic"},
        {"verdict": "slip", "cause": "convention", "convention": ["n-1 variance"]},
    ):
        plan = fix.plan_checks("p.md", "0.5", [{**base, **extra}])
        assert plan.chosen() == []
    shown = fix.plan_checks("p.md", "0.5", [{**base, "verdict": "slip", "cause": "convention"}])
    assert "convention" in shown.fixes[0].message


def test_a_number_without_a_column_is_not_fixed_and_says_so() -> None:
    check = {
        "claim": "z",
        "index": [0, 5],
        "verdict": "slip",
        "printed": "-2.049",
        "expected": "-2.048",
        "expected_value": "-2.048",
        "exact": "-2.04837",
        "source_line": 1,
    }
    plan = fix.plan_checks("p.md", "z = -2.049", [check])
    assert plan.chosen() == []
    assert "column is not in the report" in plan.fixes[0].message
    assert plan.fixes[0].applicability == fix.DISPLAY_ONLY


# ----------------------------------------------------------------------------- the source article


def _places_by_hand(text: str, checks: list[dict]) -> list[dict]:
    """The seed article's three slips with the columns a reader gives them, found here by hand.

    Line 311 is ``$$z=[1.190,0.547,-0.487,1.737,0.311,-2.049,2.229]$$`` and line 306 ends
    ``$-0.487+(-1.562)=-2.049$``; a check that already has its columns keeps them, and
    they must agree.
    """
    lines = text.split("\n")
    out = []
    for c in checks:
        c = dict(c)
        if c["verdict"] in ("slip", "wrong") and c.get("printed") == "-2.049":
            row = lines[c["source_line"] - 1]
            k = row.index("-2.049") if c["source_line"] == 311 else row.rindex("-2.049")
            place = {"source_column": k + 1, "source_end_column": k + 7}
            for key, v in place.items():
                assert c.setdefault(key, v) == v, (c, place)
        out.append(c)
    return out


@pytest.fixture(scope="module")
def seed_text() -> str:
    assert SEED is not None
    return SEED.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def seed_checks(seed_text: str) -> list[dict]:
    assert SEED is not None
    report = check_article_text(seed_text, str(SEED), "txt")
    checks = report_dict(Report((report,)))["derivations"][0]["checks"]
    return _places_by_hand(seed_text, checks)


@needs_seed
def test_seed_fix_rewrites_the_logit_and_suggests_for_the_displayed_line(
    seed_text: str, seed_checks: list[dict]
) -> None:
    assert SEED is not None
    plan = fix.plan_checks(str(SEED), seed_text, seed_checks)
    chosen = plan.chosen()
    assert [(f.edit.line, f.edit.old, f.edit.new) for f in chosen if f.edit] == [
        (311, "-2.049", "-2.048")
    ]
    shown = [f for f in plan.suggestions if f.line == 306]
    assert shown and all(f.edit is None for f in shown)
    assert "right as written" in shown[0].message and "≈" in shown[0].message
    new = fix.apply(seed_text, [f.edit for f in chosen if f.edit])
    assert new == seed_text.replace(
        "0.311,-2.049,2.229]$$", "0.311,-2.048,2.229]$$"
    )  # one number, every other byte kept
    assert "$-0.487+(-1.562)=-2.049$" in new
    again = check_article_text(new, str(SEED), "txt")
    on_311 = [c for r in again.results for c in r.checks if r.claim.source_line == 311]
    assert any(c.printed == "-2.048" for c in on_311)
    assert all(c.verdict in ("exact", "rounded") for c in on_311)


@needs_seed
def test_seed_fix_from_the_command_line(tmp_path: Path, seed_text: str) -> None:
    """End to end: ``symtf check --fix`` on a copy of the source article."""
    assert SEED is not None
    copy = tmp_path / SEED.name
    shutil.copyfile(SEED, copy)
    report = json.loads(_symtf("check", str(copy), "--format", "json").stdout)
    columns = [c for c in report["derivations"][0]["checks"] if c.get("source_column") is not None]
    r = _symtf("check", str(copy), "--fix")
    if not columns:
        assert copy.read_bytes() == SEED.read_bytes()  # no place to the column: nothing moved
        assert "column is not in the report" in r.stderr
        pytest.skip("the report gives no columns yet: --fix leaves articles as they are")
    assert "fixed 1 number(s)" in r.stderr, r.stderr
    assert copy.read_text(encoding="utf-8") == seed_text.replace(
        "0.311,-2.049,2.229]$$", "0.311,-2.048,2.229]$$"
    )
    assert "≈" in r.stderr and "line 306" in r.stderr
    again = json.loads(_symtf("check", str(copy), "--format", "json").stdout)
    assert not [
        c
        for c in again["derivations"][0]["checks"]
        if c["source_line"] == 311 and c["verdict"] in ("slip", "wrong")
    ]


@needs_seed
def test_seed_diff_writes_nothing(tmp_path: Path) -> None:
    assert SEED is not None
    copy = tmp_path / SEED.name
    shutil.copyfile(SEED, copy)
    r = _symtf("check", str(copy), "--diff")
    assert r.returncode == 1
    assert copy.read_bytes() == SEED.read_bytes()


def test_fix_needs_files_and_text_output(tmp_path: Path) -> None:
    r = _symtf("check", "--fix")
    assert r.returncode == 2 and "name the files" in r.stderr
    path, _, _ = _mutated(tmp_path)
    r = _symtf("check", str(path), "--fix", "--format", "json")
    assert r.returncode == 2 and "--format text" in r.stderr


# ----------------------------------------------------------------------------- generated articles


def _softmax(row: list[Fraction]) -> list[mpmath.mpf]:
    e = [mpmath.exp(mpmath.mpf(x.numerator) / x.denominator) for x in row]
    total = sum(e)
    return [v / total for v in e]


def _rounding(x: mpmath.mpf, decimals: int) -> tuple[Fraction, Fraction] | None:
    """``(correct rounding, other neighbour)`` of ``x`` on the grid, or ``None`` near a tie."""
    scaled = x * 10**decimals
    k = int(mpmath.floor(scaled))
    frac = scaled - k
    if abs(frac - mpmath.mpf("0.5")) < mpmath.mpf("1e-20"):
        return None
    near, other = (k, k + 1) if frac < 0.5 else (k + 1, k)
    return Fraction(near, 10**decimals), Fraction(other, 10**decimals)


def _text(x: Fraction, decimals: int) -> str:
    sign = "-" if x < 0 else ""
    n = abs(x) * 10**decimals
    assert n.denominator == 1
    digits = str(n.numerator).rjust(decimals + 1, "0")
    return f"{sign}{digits[:-decimals]}.{digits[-decimals:]}"


@st.composite
def _articles(draw: st.DrawFn) -> tuple[str, dict[tuple[int, int, int], tuple[str, str]]]:
    """A Markdown post: a score matrix, then its row softmax with a few slips.

    Returns the text and, for each slipped weight, its place ``(line, column, end)``
    and ``(printed, correct rounding)``, all computed here with mpmath.
    """
    n = draw(st.integers(3, 4))
    scores = [[Fraction(draw(st.integers(-20, 20)), 10) for _ in range(n)] for _ in range(n)]
    weights = [_softmax(row) for row in scores]
    rounded = [[_rounding(w, 3) for w in row] for row in weights]
    assume(all(r is not None for row in rounded for r in row))
    slips = draw(
        st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), min_size=1, max_size=2)
    )
    score_rows = " \\\\ ".join(" & ".join(_text(s, 1) for s in row) for row in scores)
    head = [
        "# Attention weights from scores",
        "",
        "The scores of each query against each key are",
        "",
        f"$$S = \\begin{{bmatrix}} {score_rows} \\end{{bmatrix}}$$",
        "",
        "Taking the softmax of each row gives the attention weights:",
        "",
    ]
    line = len(head) + 1
    row_text = "$$A = \\begin{bmatrix} "
    slipped: dict[tuple[int, int, int], tuple[str, str]] = {}
    for i in range(n):
        for j in range(n):
            r = rounded[i][j]
            assert r is not None
            t = _text(r[1] if (i, j) in slips else r[0], 3)
            col = len(row_text) + 1
            if (i, j) in slips:
                slipped[(line, col, col + len(t))] = (t, _text(r[0], 3))
            row_text += t + (" & " if j < n - 1 else (" \\\\ " if i < n - 1 else " "))
    text = "\n".join([*head, row_text + "\\end{bmatrix}$$", "", "That is all."]) + "\n"
    return text, slipped


POST = """# Attention weights from scores

The scores of the three queries against the three keys are

$$S = \\begin{bmatrix} 0.5 & 1.2 & -0.3 \\\\ 2.0 & 0.1 & 0.7 \\\\ -1.1 & 0.4 & 0.9 \\end{bmatrix}$$

Taking the softmax of each row gives the attention weights:

$$A = \\begin{bmatrix} 0.289 & 0.581 & 0.130 \\\\ 0.703 & 0.106 & 0.192 \\\\ 0.078 & 0.348 & 0.574 \\end{bmatrix}$$
"""


def test_a_slipped_softmax_weight_is_fixed_in_a_post() -> None:
    """softmax([2.0, 0.1, 0.7])[1] = 0.1051744… (mpmath): the post's 0.106 is a slip."""
    weight = _softmax([Fraction(2), Fraction(1, 10), Fraction(7, 10)])[1]
    assert _rounding(weight, 3) == (Fraction("0.105"), Fraction("0.106"))
    report = check_article_text(POST, "post.md", "md")
    checks = report_dict(Report((report,)))["derivations"][0]["checks"]
    row = POST.split("\n")[8]
    k = row.index("0.106")
    for c in checks:
        if c["verdict"] in ("slip", "wrong"):
            assert (c["source_line"], c["printed"]) == (9, "0.106")
            assert c.setdefault("source_column", k + 1) == k + 1
            c.setdefault("source_end_column", k + 6)
    plan = fix.plan_checks("post.md", POST, checks)
    new = fix.apply(POST, [f.edit for f in plan.chosen() if f.edit])
    assert new == POST.replace("0.703 & 0.106 &", "0.703 & 0.105 &")


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(_articles())
def test_fix_then_check_on_generated_articles(
    case: tuple[str, dict[tuple[int, int, int], tuple[str, str]]],
) -> None:
    """Fixed numbers are judged right afterwards; every byte not fixed is kept.

    Each fixed number must be one the article was built with a slip at, and its new
    text the correct rounding computed here. The places a check gives (when the
    report has columns) must be where the article was built to have them.
    """
    text, slipped = case
    report = check_article_text(text, "post.md", "md")
    checks = report_dict(Report((report,)))["derivations"][0]["checks"]
    for c in checks:
        if c["verdict"] in ("slip", "wrong"):
            line = c["source_line"]
            mine = [p for p in slipped if p[0] == line and slipped[p][0] == c["printed"]]
            if c.get("source_column") is not None:
                place = (line, c["source_column"], c["source_end_column"])
                assert place in slipped, (c, slipped)
            elif len(mine) == 1:  # the place the article was built with
                c["source_column"], c["source_end_column"] = mine[0][1], mine[0][2]
    plan = fix.plan_checks("post.md", text, checks)
    chosen = [f for f in plan.chosen() if f.edit is not None]
    expected = text.split("\n")
    for f in sorted(chosen, key=lambda f: -f.edit.column if f.edit else 0):
        assert f.edit is not None
        place = (f.edit.line, f.edit.column, f.edit.end_column)
        assert place in slipped
        old, right = slipped[place]
        assert (f.edit.old, f.edit.new) == (old, right)
        row = expected[f.edit.line - 1]
        expected[f.edit.line - 1] = row[: f.edit.column - 1] + right + row[f.edit.end_column - 1 :]
    new = fix.apply(text, [f.edit for f in chosen if f.edit])
    assert new == "\n".join(expected)  # only the fixed numbers changed, byte for byte
    if not chosen:
        return
    again = check_article_text(new, "post.md", "md")
    fixed = {(f.edit.line, f.edit.new) for f in chosen if f.edit}
    still = [
        c
        for r in again.results
        for c in r.checks
        if (r.claim.source_line, c.printed) in fixed and c.verdict not in ("exact", "rounded")
    ]
    assert not still


def test_fix_inherited_rewrites_a_number_with_its_root(tmp_path: Path) -> None:
    """Attention weight [1, 1] printed 0.781 (it is 0.7307…), and output row 1 computed from
    that printed row (0.060·X₀ + 0.781·X₁ + 0.209·X₂ = [0.269, 1.771, 0.060, 0.8855]):
    the output's 1.771 and 0.886 are off only because the weight was."""
    good = SELF_ATTENTION.read_text(encoding="utf-8")
    bad = good.replace("0.060 0.731 0.209", "0.060 0.781 0.209").replace(
        "0.269 1.671 0.060 0.835", "0.269 1.771 0.060 0.886"
    )
    a11, _ = _exact_noproj()
    X = [[1, 0, 1, 0], [0, 2, 0, 1], [1, 1, 0, mpmath.mpf("0.5")]]
    scores = [sum(a * b for a, b in zip(X[1], q, strict=True)) / 2 for q in X]
    e = [mpmath.exp(v) for v in scores]
    row = [sum(e[k] / sum(e) * X[k][j] for k in range(3)) for j in range(4)]
    assert [mpmath.nstr(v, 3) for v in (a11, row[1], row[3])] == ["0.731", "1.67", "0.835"]
    path = tmp_path / "inherited.toml"
    path.write_text(bad, encoding="utf-8")
    plain = fix.plan(check_text(path, bad, None), bad)
    assert [f.edit.new for f in plain.chosen() if f.edit] == ["0.731"]
    assert sorted(f.edit.new for f in plain.fixes if f.applicability == fix.UNSAFE and f.edit) == [
        "0.835",
        "1.671",
    ]
    r = _symtf("check", str(path), "--fix-inherited")
    assert r.returncode == 0, r.stderr
    assert path.read_text(encoding="utf-8") == good  # the root and both inherited numbers
