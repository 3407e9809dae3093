"""A check that reuses the last one gives exactly the report a cold check gives.

The reference is :func:`symtf.commands.draft.check_drafted` with the plain
:func:`symtf.checking.compare.check`, run from scratch on the edited article's draft:
for every single-number edit tried (of the source article and of the bundled article
fixtures), the report of :func:`symtf.checking.incremental.check` must be the same,
claim for claim, field for field (verdicts, explanations, causes, roots), whether it
reuses the check of the unedited article or the check of the edit before it.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest

from symtf import spec
from symtf.checking import compare, incremental
from symtf.checking.incremental import Checked
from symtf.checking.report import Report
from symtf.commands.draft import check_drafted
from symtf.draft import draft_text
from symtf.renderers.json import report_dict

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "tests" / "draft_sources"


def _article(name: str) -> Path | None:
    for base in (ROOT.parent, ROOT.parent.parent):
        p = base / "shared" / "articles" / name
        if p.exists():
            return p
    return None


#: (article, how many random single-number edits to try). The source articles are outside
#: the project (their licence is unknown): the test runs on them where they are present.
ARTICLES: list[tuple[Path, int]] = [
    (p, n)
    for p, n in (
        (_article("000_b60c289f27ab6d88.txt"), 16),
        (_article("003_6b8589bde336badf.txt"), 6),
    )
    if p is not None
]
ARTICLES += [
    (p, {"mortenson_illustrated_attention_snippet.ipynb": 1, "rasbt_ch03.ipynb": 3}.get(p.name, 5))
    for p in sorted(SOURCES.iterdir())
    if p.suffix in (".md", ".ipynb") and p.name != "SOURCES.md"
]
_NUMBER = re.compile(r"(?<![\w.])-?\d+\.\d+(?![\d.])")


def _kind(path: Path) -> str:
    return {".md": "md", ".ipynb": "ipynb"}.get(path.suffix, "txt")


def _edits(text: str, n: int, seed: int) -> list[str]:
    """``n`` versions of ``text``, each with one printed number's last digit changed."""
    found = [(m.start(), m.end(), m.group()) for m in _NUMBER.finditer(text)]
    rng = random.Random(seed)
    out = []
    for k in sorted(rng.sample(range(len(found)), min(n, len(found)))):
        start, end, old = found[k]
        out.append(text[:start] + old[:-1] + str((int(old[-1]) + 1) % 10) + text[end:])
    return out


def _json(report: Any) -> dict[str, Any]:
    d: dict[str, Any] = report_dict(Report((report,)))["derivations"][0]
    d.pop("seconds", None)  # how long it took: the one field that may differ
    return d


def _checked(
    draft: Any, name: str, previous: Checked | None, seeds: Checked | None = None
) -> tuple[Any, Checked]:
    """The draft checked as the language server checks it (the last check reused, and the
    traces of ``seeds``)."""
    last: list[Checked] = []

    def check(d: Any) -> Any:
        last.append(incremental.check(d, previous, seeds))
        return last[-1].report

    return check_drafted(draft, name, check=check), last[-1]


def _same(cold: Any, warm: Any, what: str) -> None:
    a, b = _json(cold), _json(warm)
    for x, y in zip(a["checks"], b["checks"], strict=True):
        assert x == y, what
    assert a == b, what
    for ra, rb in zip(cold.results, warm.results, strict=True):
        assert ra.claim == rb.claim, what
        assert [c.value for c in ra.checks] == [c.value for c in rb.checks], what


@pytest.mark.parametrize(("path", "n"), ARTICLES, ids=[p.name for p, _ in ARTICLES])
def test_a_check_reusing_the_last_gives_the_report_a_cold_check_gives(path: Path, n: int) -> None:
    text = path.read_text(encoding="utf-8")
    kind = _kind(path)
    name = path.name
    first = draft_text(text, kind, path=name)
    report, base = _checked(first, name, None)
    _same(check_drafted(first, name), report, "unedited")
    chained: Checked = base
    kept = traces = 0
    for k, edited in enumerate(_edits(text, n, seed=len(text))):
        draft = draft_text(edited, kind, path=name)
        cold = check_drafted(draft, name)
        warm, done = _checked(draft, name, base)  # from the unedited article's check
        _same(cold, warm, f"edit {k}, from the unedited article")
        kept += done.reused[0]
        traces += done.reused[3]
        # as the editor checks an edit made after undoing the one before: from the unedited
        # article's check, with the traces of the edit before
        seeded, _ = _checked(draft, name, base, chained)
        _same(cold, seeded, f"edit {k}, from the unedited article and the edit before")
        again, chained = _checked(draft, name, chained)  # from the edit before
        _same(cold, again, f"edit {k}, from the edit before")
    if path.name.startswith("000_"):  # the edits were not all checked afresh
        assert kept > 0 and traces > 0


# ----------------------------------------------------------------------------- the rules


STEPS = (ROOT / "derivations" / "steps_ffn_bce.toml").read_text(encoding="utf-8")


def test_claims_upstream_of_a_changed_step_keep_their_verdicts_and_the_rest_are_checked() -> None:
    before = spec.loads(STEPS, "ffn.toml")
    after = spec.loads(STEPS.replace('b2 = "-0.1"', 'b2 = "-0.2"'), "ffn.toml")
    done = incremental.check(after, incremental.check(before))
    # pre and h do not read b2; z, p and the loss do
    assert done.reused[:2] == (2, len(after.claims)) and not done.reused[3]
    _same(compare.check(after), done.report, "b2 changed")
    assert [r.claim.label for r in done.report.results][:2] == ["pre-activation", "hidden (ReLU)"]


def test_a_changed_printed_number_is_checked_and_diagnosed_again_the_rest_kept() -> None:
    before = spec.loads(STEPS, "ffn.toml")
    text = STEPS.replace('printed = "0.4550"', 'printed = "0.4551"')
    assert text != STEPS
    after = spec.loads(text, "ffn.toml")
    done = incremental.check(after, incremental.check(before))
    assert done.reused[:2] == (len(after.claims) - 1, len(after.claims)) and done.reused[3]
    _same(compare.check(after), done.report, "the loss's printed value changed")
    assert done.report.results[-1].checks[0].printed == "0.4551"


def test_a_node_is_taken_from_an_earlier_trace_only_with_everything_it_is_computed_from() -> None:
    """A later trace takes a node from an earlier evaluation of another graph only when the
    node and every node above it are the same there: the loss of b2 = -0.1 is not the loss
    of b2 = -0.2, although its own definition (bce of p and y) is the same."""
    from symtf.backends import BallBackend
    from symtf.graph.core import Reuse, reset_counts
    from symtf.graph.pipeline import run

    before = spec.loads(STEPS, "ffn.toml")
    after = spec.loads(STEPS.replace('b2 = "-0.1"', 'b2 = "-0.2"'), "ffn.toml")
    with BallBackend(128) as xp:
        old = run(before, xp)  # every node, b2 = -0.1
        part = run(after, xp, needed={"p"})  # b2 = -0.2, up to p: no y, no loss
        reset_counts()
        got = run(after, xp, reuse=Reuse(part, also=(old,)))
        counts = reset_counts()
        cold = run(after, xp)
    # y (the same in the old trace) is taken; the loss, over the new p, is computed
    assert counts["nodes computed"] == 1 and counts["nodes reused"] == len(list(part)) + 1
    assert str(got.value("loss")) == str(cold.value("loss")) != str(old.value("loss"))
    # and a whole trace of the old graph, from the new one and the old one: b2 and what
    # reads it come from the old trace, the rest from either
    with BallBackend(128) as xp:
        reset_counts()
        back = run(before, xp, reuse=Reuse(cold, also=(old,)))
        assert reset_counts()["nodes computed"] == 0
    for name in old:
        assert str(back.value(name)) == str(old.value(name)), name


def test_a_model_edited_twice_takes_what_each_earlier_check_computed() -> None:
    """Checks of three versions of a model, each reusing the one before and the one before
    that (as the editor's edit, undo, edit): every report is a cold check's."""
    texts = [
        STEPS,
        STEPS.replace('b2 = "-0.1"', 'b2 = "-0.2"'),
        STEPS.replace('printed = "0.4550"', 'printed = "0.4551"'),
    ]
    first = incremental.check(spec.loads(texts[0], "ffn.toml"))
    second = incremental.check(spec.loads(texts[1], "ffn.toml"), first)
    third = spec.loads(texts[2], "ffn.toml")
    done = incremental.check(third, first, seeds=second)
    _same(compare.check(third), done.report, "the model of the first, after the second")
    assert done.reused[3]  # the same model as the first: its traces
    back = spec.loads(texts[1], "ffn.toml")
    again = incremental.check(back, done, seeds=first)
    _same(compare.check(back), again.report, "the second again, from the third and the first")


def test_a_check_that_did_not_finish_lends_nothing() -> None:
    d = spec.loads(STEPS, "ffn.toml")
    partial = Checked(d, compare.check(d))  # a report alone, as a check cut short leaves
    done = incremental.check(d, partial)
    assert done.reused == (0, len(d.claims), 0, False)
    _same(compare.check(d), done.report, "from a partial check")


# ----------------------------------------------------------------------------- constructed edits
#
# Each edit below is made by hand to the text of a derivation; the expectation is the report
# a cold check of the edited text gives (field for field), and, where the construction says
# which claims cannot have changed, that those were kept.


def _again(before_text: str, after_text: str, name: str = "ffn.toml") -> Checked:
    """``after_text`` checked reusing the check of ``before_text``, and compared with a cold
    check of ``after_text``; and the same from the check of ``after_text`` itself."""
    assert before_text != after_text  # the edit was made
    before = spec.loads(before_text, name)
    after = spec.loads(after_text, name)
    done = incremental.check(after, incremental.check(before))
    cold = compare.check(after)
    _same(cold, done.report, "from the text before the edit")
    back = incremental.check(before, done)  # and the edit undone
    _same(compare.check(before), back.report, "the edit undone")
    return done


def _claim_block(text: str, label: str) -> str:
    m = re.search(r'\[\[claims\]\]\nlabel = "' + re.escape(label) + r'"\n(?:[^\[\n].*\n|\n)*', text)
    assert m is not None, label
    return m.group()


def test_a_step_whose_expression_changed_is_checked_again_with_what_reads_it() -> None:
    done = _again(STEPS, STEPS.replace('z = "h @ W2 + b2"', 'z = "h @ W2 - b2"'))
    # pre and h are computed before z: kept; z, p and the loss read it
    assert done.reused[:2] == (2, 5) and not done.reused[3]
    logit = done.report.results[2]
    assert logit.claim.label == "logit" and all(c.verdict == "wrong" for c in logit.checks)


def test_a_claim_inserted_first_moves_every_claim_and_changes_no_verdict() -> None:
    first = '[[claims]]\nlabel = "hidden again"\nstep = "h"\nprinted = """\n0 0 1 1.25\n1 2.5 0 0.6\n"""\n\n'
    at = STEPS.index("[[claims]]")
    done = _again(STEPS, STEPS[:at] + first + STEPS[at:])
    assert done.report.results[0].claim.label == "hidden again"
    assert done.reused[:2] == (5, 6) and done.reused[3]  # the same model: its traces kept
    assert done.report.results[0].checks[-1].verdict == "wrong"  # 0.6 for 0.5


def test_a_removed_claim_leaves_the_others_kept() -> None:
    done = _again(STEPS, STEPS.replace(_claim_block(STEPS, "logit"), ""))
    assert [r.claim.label for r in done.report.results] == [
        "pre-activation",
        "hidden (ReLU)",
        "probability",
        "BCE loss",
    ]
    assert done.reused[:2] == (4, 4) and done.reused[3]


def test_a_claim_appended_is_checked_and_the_others_kept() -> None:
    extra = '\n[[claims]]\nlabel = "logit again"\nstep = "z"\nprinted = """\n0.963\n-0.224\n"""\n'
    done = _again(STEPS, STEPS + extra)
    assert done.reused[:2] == (5, 6)
    assert [c.verdict for c in done.report.results[-1].checks] == ["rounded", "wrong"]


BIRDS = (ROOT / "derivations" / "birds_build_nests.toml").read_text(encoding="utf-8")


def test_convention_variants_an_undone_edit_built_of_the_same_model_are_taken_whole() -> None:
    """A displayed line made off (and unexplained) sends the diagnosis through every
    convention variant; after that edit is undone, another edit of the same model takes
    those variants' traces as they were, and its report is still a cold check's."""
    old = 'printed = "10.068"'  # e^2.309, printed as the last of three exponentials
    assert BIRDS.count(old) == 1
    first = incremental.check(spec.loads(BIRDS, "birds.toml"))
    one = incremental.check(
        spec.loads(BIRDS.replace(old, 'printed = "10.069"'), "birds.toml"), first
    )
    built = {
        k: v for k, v in one.variants.items() if v is not None and vars(v).get("_exact") is not None
    }
    assert built  # the diagnosis of 10.069 computed the variants' exact values
    other = spec.loads(BIRDS.replace(old, 'printed = "10.067"'), "birds.toml")
    two = incremental.check(other, first, seeds=one)  # as the editor checks it after an undo
    _same(compare.check(other), two.report, "another edit, from the unedited check")
    assert two.reused[3]
    for key, variant in built.items():
        assert vars(two.variants[key])["_exact"] is vars(variant)["_exact"], key


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # a displayed line's printed value: the lines before it kept, the ones after it
        # (which read what the lines before them printed) checked again
        ('printed = "21.372"', 'printed = "21.373"'),
        # a displayed line's expression
        ('expression = "10.068 / 21.372"', 'expression = "10.068 / 21.373"'),
        # a step claim's printed entry far down the derivation
        ('printed = "0.471"', 'printed = "0.472"'),
    ],
)
def test_displayed_lines_of_a_hand_derivation_edited(old: str, new: str) -> None:
    assert BIRDS.count(old) >= 1
    done = _again(BIRDS, BIRDS.replace(old, new, 1), "birds.toml")
    assert done.reused[3] and 0 < done.reused[0] < done.reused[1]


def test_a_given_input_of_a_hand_derivation_edited() -> None:
    old = 'W_Q = """\n0 0 1\n'
    assert BIRDS.count(old) == 1  # the first row of the head's query weights
    done = _again(BIRDS, BIRDS.replace(old, 'W_Q = """\n0 0 2\n'), "birds.toml")
    assert not done.reused[3]  # the model changed: every trace computed again


#: An article whose displayed lines carry copy slips (a miscopied 0.2312), each a result of
#: its own before its line's (made up for the test; see tests/test_lineage.py).
COPIED = """# Cross-entropy for one token, by hand

Our model gives three logits, z = [2.0, 1.0, 0.5], and the target is the second token.

$$e^{2.0} = 7.389$$

$$e^{1.0} = 2.718$$

$$e^{0.5} = 1.649$$

$$7.389 + 2.718 + 1.649 = 11.756$$

$$p_2 = 2.718 / 11.756 = 0.2312$$

so the other two tokens share

$$1 - 0.2322 = 0.7678$$

The loss for the target is

$$L = -\\ln(0.2321) = 1.464$$

and the gradient of the loss with respect to the target's logit is

$$p_2 - 1 = 0.2321 - 1 = -0.7679$$
"""


@pytest.mark.parametrize(
    ("old", "new"),
    [("-0.7679", "-0.7689"), ("1.464", "1.465"), ("0.7678", "0.7688"), ("11.756", "11.757")],
)
def test_lines_with_copy_slips_kept_or_checked_again(old: str, new: str) -> None:
    name = "copied.md"
    first = draft_text(COPIED, "md", path=name)
    _, base = _checked(first, name, None)
    assert any("copy_of" in c.extra for r in base.report.results for c in r.checks)
    edited = COPIED.replace(old, new)
    assert edited != COPIED
    draft = draft_text(edited, "md", path=name)
    warm, done = _checked(draft, name, base)
    _same(check_drafted(draft, name), warm, f"{old} -> {new}")
    if old == "-0.7679":  # the last line: every line before it kept, copy slips and all;
        # checked again are the line and its link p_2 - 1 = 0.2321 (judged on its own after it)
        assert done.reused[0] == done.reused[1] - 2
