"""Autograd in notebooks: ``loss.backward()``, ``w.grad`` and ``torch.autograd.grad``.

The printed gradients are checked against the registry's ``grad`` through the translated
steps. Every expected value here is derived by hand from the code as written (the
derivation is in the comments) or from mpmath central differences at 50 digits; none
is read from symtf's output.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path

import mpmath
from mp_reference import rounds_to

from symtf.commands.draft import check_article
from symtf.draft import draft_file

MPMATH_DIGITS = 50


def _post(tmp_path: Path, code: str, output: str) -> Path:
    path = tmp_path / "post.md"
    path.write_text(f"```python\n{code}```\n\n```\n{output}```\n", encoding="utf-8")
    return path


def _by_line(path: Path) -> tuple[dict[int, list[tuple[str, str]]], dict[int, str]]:
    """Each checked print's (printed, verdict) pairs by line, and each unchecked print's
    reason by line."""
    report = check_article(path)
    checked: dict[int, list[tuple[str, str]]] = {}
    for r in report.results:
        for c in r.checks:
            checked.setdefault(r.claim.source_line or 0, []).append((c.printed, c.verdict))
    unchecked = {u.line: getattr(u, "note", "") for u in report.unchecked}
    return checked, unchecked


def _central(f: Callable[[list[mpmath.mpf]], mpmath.mpf], at: list[str]) -> list[mpmath.mpf]:
    """∂f/∂x_i at ``at`` by mpmath central differences (h = 1e-20 at 50 digits)."""
    x = [mpmath.mpf(v) for v in at]
    h = mpmath.mpf("1e-20")
    out = []
    for i in range(len(x)):
        up = [v + h if k == i else v for k, v in enumerate(x)]
        down = [v - h if k == i else v for k, v in enumerate(x)]
        out.append((f(up) - f(down)) / (2 * h))
    return out


# --------------------------------------------------------------- backward, accumulation, SGD

SGD = """\
import torch
w = torch.tensor([1.0, -2.0], requires_grad=True)
x = torch.tensor([0.5, 1.5])
loss = ((w * x).sum() - 1) ** 2
loss.backward()
print(w.grad)
with torch.no_grad():
    w -= 0.1 * w.grad
w.grad.zero_()
loss = ((w * x).sum() - 1) ** 2
loss.backward()
print(w)
print(w.grad)
c = torch.tensor([3.0], requires_grad=True)
d = torch.tensor([2.0], requires_grad=True)
l1 = (c * d).sum()
l1.backward()
l2 = (d * d).sum()
l2.backward()
print(c.grad)
print(d.grad)
"""
# loss = (w·x − 1)²: ∂/∂w = 2(w·x − 1)·x. At w = (1, −2): w·x − 1 = −3.5, so (−3.5, −10.5).
# w − 0.1·grad = (1.35, −0.95); w·x − 1 = −1.75, so the zeroed .grad is (−1.75, −5.25).
# c.grad = d = 2 (l2 does not read c: its backward leaves c.grad alone);
# d.grad accumulates ∂l1/∂d + ∂l2/∂d = c + 2d = 7.
SGD_OUT = """\
tensor([-3.5000, -10.5000])
tensor([ 1.3500, -0.9500], requires_grad=True)
tensor([-1.7500, -5.2500])
tensor([2.])
tensor([7.])
"""


def test_backward_then_grad_a_manual_sgd_step_and_accumulation(tmp_path: Path) -> None:
    checked, unchecked = _by_line(_post(tmp_path, SGD, SGD_OUT))

    def loss(w: list[mpmath.mpf]) -> mpmath.mpf:
        return (w[0] * mpmath.mpf("0.5") + w[1] * mpmath.mpf("1.5") - 1) ** 2

    g1 = _central(loss, ["1.0", "-2.0"])
    assert all(rounds_to(g, p) for g, p in zip(g1, ("-3.5000", "-10.5000"), strict=True))
    w2 = [mpmath.mpf(1) - mpmath.mpf("0.1") * g1[0], mpmath.mpf(-2) - mpmath.mpf("0.1") * g1[1]]
    g2 = _central(loss, [mpmath.nstr(v, 40) for v in w2])
    assert all(rounds_to(g, p) for g, p in zip(g2, ("-1.7500", "-5.2500"), strict=True))
    assert checked == {
        26: [("-3.5000", "exact"), ("-10.5000", "exact")],
        27: [("1.3500", "exact"), ("-0.9500", "exact")],
        28: [("-1.7500", "exact"), ("-5.2500", "exact")],  # not accumulated: zeroed
        29: [("2.", "exact")],  # l2's backward does not reach c
        30: [("7.", "exact")],  # accumulated: 2 + 5
    }
    assert unchecked == {}


def test_rasbt_appendix_a_gradients_agree_with_a_hand_derivation() -> None:
    """``grad(loss, w1, retain_graph=True)`` and ``loss.backward(); print(w1.grad)``.

    z = x1·w1 + b, a = σ(z), loss = −ln a (y = 1): ∂loss/∂z = a − 1, so
    ∂loss/∂w1 = (a − 1)·x1 and ∂loss/∂b = a − 1, with x1 = 1.1, w1 = 2.2, b = 0.
    """
    path = Path(__file__).resolve().parent / "draft_sources" / "rasbt_appendix_a_part1.ipynb"
    checked, unchecked = _by_line(path)
    a = 1 / (1 + mpmath.e ** -(mpmath.mpf("1.1") * mpmath.mpf("2.2")))
    dw, db = (a - 1) * mpmath.mpf("1.1"), a - 1
    assert rounds_to(dw, "-0.0898") and rounds_to(db, "-0.0817")
    # the same numbers by central differences of the loss itself
    loss = _central(
        lambda v: -mpmath.log(1 / (1 + mpmath.e ** -(mpmath.mpf("1.1") * v[0] + v[1]))),
        ["2.2", "0.0"],
    )
    assert abs(loss[0] - dw) < mpmath.mpf("1e-30") and abs(loss[1] - db) < mpmath.mpf("1e-30")
    # grad_L_w1, grad_L_b printed as (tensor([-0.0898]),) at lines 501-502; w1.grad, b.grad
    for line, printed in ((501, "-0.0898"), (502, "-0.0817"), (537, "-0.0898"), (538, "-0.0817")):
        assert checked[line] == [(printed, "rounded")], line
        assert line not in unchecked


# --------------------------------------------------------------- never a wrong verdict

NOT_MODELLED = """\
import torch
e = torch.tensor([2.0], requires_grad=True)
l3 = (e.detach() * e).sum()
l3.backward()
print(e.grad)
p = torch.tensor([1.0], requires_grad=True)
q = torch.tensor([5.0], requires_grad=True)
l4 = (p * p).sum()
print(torch.autograd.grad(l4, q, allow_unused=True))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
l4.backward()
print(p.grad)
opt.zero_grad()
l4.backward()
print(p.grad)
"""
# e.grad is 2 in PyTorch (no gradient through the detached factor), where differentiating
# e·e would give 4; q is unused (None); p.grad is 2p = 2 after the first backward; after
# zero_grad of an optimizer over tensors the code does not name, 2 or 4 (accumulated).
NOT_MODELLED_OUT = """\
tensor([2.])
(None,)
tensor([2.])
tensor([2.])
"""


def test_what_autograd_does_not_follow_is_left_unchecked(tmp_path: Path) -> None:
    path = _post(tmp_path, NOT_MODELLED, NOT_MODELLED_OUT)
    checked, unchecked = _by_line(path)
    assert checked == {22: [("2.", "exact")]}  # p.grad = 2p before zero_grad
    assert "detached" in unchecked[20]
    assert "zeroes is not translated" in unchecked[23]
    # no grad step with respect to the leaf the loss does not read: check would stop on it
    steps = tomllib.loads(draft_file(path).toml).get("steps", {})
    assert not any("q)" in text for text in steps.values()), steps


WITH_PRINT = """\
import torch
w = torch.tensor([1.0, -2.0], requires_grad=True)
x = torch.tensor([0.5, 1.5])
with torch.no_grad():
    y = torch.softmax(w * x, dim=0)
    print(y)
print(w * x)
"""
WITH_PRINT_OUT = """\
tensor([0.9707, 0.0293])
tensor([ 0.5000, -3.0000])
"""


def test_a_print_inside_a_with_block_is_matched_with_its_output(tmp_path: Path) -> None:
    """The body of ``with torch.no_grad():`` prints to the cell's output like any other
    line; it was dropped, and with two output groups for one print neither was checked."""
    checked, _ = _by_line(_post(tmp_path, WITH_PRINT, WITH_PRINT_OUT))
    # softmax(0.5, -3.0): 1/(1 + e^-3.5) = 0.970688…, e^-3.5/(1 + e^-3.5) = 0.029312…
    first = 1 / (1 + mpmath.e ** mpmath.mpf("-3.5"))
    assert rounds_to(first, "0.9707") and rounds_to(1 - first, "0.0293")
    assert checked[12] == [("0.9707", "rounded"), ("0.0293", "rounded")]
    assert checked[13] == [("0.5000", "exact"), ("-3.0000", "exact")]


JACOBIAN_CODE = """import torch

def f(z):
    return torch.softmax(z, dim=0)

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
J = torch.autograd.functional.jacobian(f, x)
print(J)
"""

#: PyTorch's print, with the last entry written 0.2272 for 0.2227 (digits swapped).
JACOBIAN_OUT = """tensor([[ 0.0819, -0.0220, -0.0599],
        [-0.0220,  0.1848, -0.1628],
        [-0.0599, -0.1628,  0.2272]])
"""


def test_the_jacobian_of_a_notebook_function_is_checked(tmp_path: Path) -> None:
    """``torch.autograd.functional.jacobian(f, x)`` of a function the post defines: f is
    translated at x and the print is judged against ∂f/∂x, s_i(δ_ij − s_j) (mpmath)."""
    with mpmath.workdps(MPMATH_DIGITS):
        e = [mpmath.e ** mpmath.mpf(v) for v in (1, 2, 3)]
        s = [v / mpmath.fsum(e) for v in e]
        jac = [[s[i] * ((1 if i == j else 0) - s[j]) for j in range(3)] for i in range(3)]
    printed = [
        r.split()
        for r in JACOBIAN_OUT.replace("tensor(", "")
        .replace("[", " ")
        .replace("]", " ")
        .replace(")", "")
        .replace(",", " ")
        .splitlines()
    ]
    flat = [p for r in printed for p in r]
    assert len(flat) == 9
    right = [rounds_to(jac[k // 3][k % 3], p) for k, p in enumerate(flat)]
    assert right == [True] * 8 + [False]
    checked, _ = _by_line(_post(tmp_path, JACOBIAN_CODE, JACOBIAN_OUT))
    got = [pv for line in sorted(checked) for pv in checked[line]]
    assert [p for p, _ in got] == flat
    assert [v in ("exact", "rounded") for _, v in got] == right
    assert got[-1][1] == "wrong"
