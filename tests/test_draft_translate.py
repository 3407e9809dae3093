"""Code translated onto ops, form by form: each case is a notebook or fenced post written here.

Every expected value comes from how the case is built (the numbers are chosen so the
arithmetic is done by hand in the comments) or from mpmath at 50 digits; none is read
from symtf's output. Nothing in a fixture is ever run: the notebooks are read with
``ast``, and their outputs are written here by hand.
"""

from __future__ import annotations

import json
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

import mpmath
import pytest
from mp_reference import rounds_to

from symtf.cli import main
from symtf.commands.draft import check_article
from symtf.draft.translate import Block, Given, Translator

GOOD = ("exact", "rounded")
MPMATH_DIGITS = 50


def _notebook(tmp_path: Path, cells: list[tuple[str, str | None]], name: str = "nb") -> Path:
    """A notebook of code cells, each with the stream output written for it (or none)."""
    nb: dict[str, Any] = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": k,
                "metadata": {},
                "source": src,
                "outputs": (
                    [{"output_type": "stream", "name": "stdout", "text": out}]
                    if out is not None
                    else []
                ),
            }
            for k, (src, out) in enumerate(cells)
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / f"{name}.ipynb"
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    return path


def _post(tmp_path: Path, code: str, output: str | None = None, name: str = "post") -> Path:
    """A Markdown post: one fenced Python block, and the plain block it printed."""
    text = f"```python\n{code}```\n"
    if output is not None:
        text += f"\n```\n{output}```\n"
    path = tmp_path / f"{name}.md"
    path.write_text(text, encoding="utf-8")
    return path


def _verdicts(path: Path) -> list[tuple[str, str]]:
    """Every checked number's (printed, verdict), in the report's order."""
    return [(c.printed, c.verdict) for c in check_article(path).checks]


def _unchecked(path: Path) -> list[str]:
    """The reason each unchecked printing gives."""
    return [getattr(u, "note", "") for u in check_article(path).unchecked]


# ----------------------------------------------------------------------------- reading code


def test_a_function_of_an_earlier_cell_reads_its_literal_from_that_cell(tmp_path: Path) -> None:
    # project(x) = x @ w with w = [[0.5, -1], [2, 0.25]]: [1, 2] @ w = [0.5 + 4, -1 + 0.5]
    #                                                                = [4.5, -0.5]
    # The literal sits on line 6 of the first cell; the calling cell has one line.
    path = _notebook(
        tmp_path,
        [
            (
                "import numpy as np\n\n\n\ndef project(x):\n"
                "    w = np.array([[0.5, -1.0], [2.0, 0.25]])\n    return x @ w\n",
                None,
            ),
            ("print(project(np.array([[1.0, 2.0]])))\n", "[[ 4.5 -0.5]]\n"),
        ],
    )
    assert _verdicts(path) == [("4.5", "exact"), ("-0.5", "exact")]


def test_a_function_of_an_earlier_cell_never_reads_the_calling_cells_text(tmp_path: Path) -> None:
    # The calling cell is as long as the defining one, with other numbers at the literal's
    # place (line 6): reading the literal from it would give w = [[9.5, 8.0], ...].
    # [1, 2] @ [[0.5, -1], [2, 0.25]] = [4.5, -0.5] as above.
    path = _notebook(
        tmp_path,
        [
            (
                "import numpy as np\n\n\n\ndef project(x):\n"
                "    w = np.array([[0.5, -1.0], [2.0, 0.25]])\n    return x @ w\n",
                None,
            ),
            (
                "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nzzzzzzzzzzzzzzz = [[9.5, 8.0], [7.5, 6.25]]\n"
                "print(project(np.array([[1.0, 2.0]])))\n",
                "[[ 4.5 -0.5]]\n",
            ),
        ],
    )
    assert _verdicts(path) == [("4.5", "exact"), ("-0.5", "exact")]


def test_a_literal_too_large_to_check_is_refused_at_once_naming_cell_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    row = ", ".join(["0.5"] * 400)
    literal = "[" + ", ".join(f"[{row}]" for _ in range(400)) + "]"  # 400 × 400 = 160000
    path = _notebook(
        tmp_path,
        [
            ("import numpy as np\n", None),
            (f"x = 1\nW = np.array({literal})\nprint(W.sum())\n", "80000.0\n"),
        ],
        name="big",
    )
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert "cell 1, line 2: an array literal: expected at most 20,000 entries" in err, err
    assert "found 160,000" in err, err


def test_a_literal_of_the_largest_size_read_is_translated() -> None:
    # 100 × 200 = 20000 entries: the most one literal may hold, read as written (only the
    # translation runs here: a check of 20000 entries is not what this test is about).
    row = ", ".join(["0.5"] * 200)
    literal = "[" + ", ".join(f"[{row}]" for _ in range(100)) + "]"
    block = Block(0, f"import numpy as np\nW = np.array({literal})\n", 1, path="nb.ipynb")
    (given,) = [e for e in Translator(lambda name: None).events([block]) if isinstance(e, Given)]
    assert given.shape == (100, 200) and set(given.values) == {"0.5"}


# ----------------------------------------------------------------------------- PyTorch forms


def test_t_unsqueeze_and_nll_loss_are_translated(tmp_path: Path) -> None:
    # A = [[1, 2], [3, 4]]: Aᵀ A = [[1+9, 2+12], [2+12, 4+16]] = [[10, 14], [14, 20]]
    # v = [1, 2]: v.unsqueeze(0) @ v.unsqueeze(1) = [[1 + 4]] = [[5]]
    # nll_loss(logp, [1, 0]) = mean(−logp[0, 1], −logp[1, 0]) = (1.0 + 2.0) / 2 = 1.5
    code = (
        "import torch\nimport torch.nn.functional as F\n"
        "A = torch.tensor([[1.0, 2.0], [3.0, 4.0]])\nprint(A.t() @ A)\n"
        "v = torch.tensor([1.0, 2.0])\nprint(v.unsqueeze(0) @ v.unsqueeze(1))\n"
        "logp = torch.tensor([[-0.5, -1.0], [-2.0, -0.25]])\n"
        "target = torch.tensor([1, 0])\nprint(F.nll_loss(logp, target))\n"
    )
    out = "tensor([[10., 14.],\n        [14., 20.]])\ntensor([[5.]])\ntensor(1.5000)\n"
    assert _verdicts(_post(tmp_path, code, out)) == [
        ("10.", "exact"),
        ("14.", "exact"),
        ("14.", "exact"),
        ("20.", "exact"),
        ("5.", "exact"),
        ("1.5000", "exact"),
    ]


def test_backward_with_a_gradient_weights_the_outputs(tmp_path: Path) -> None:
    # y = x², y.backward(gradient=g): x.grad = 2x·g = [2·1·1, 2·2·0.5] = [2, 2]
    code = (
        "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x * x\n"
        "y.backward(gradient=torch.tensor([1.0, 0.5]))\nprint(x.grad)\n"
    )
    assert _verdicts(_post(tmp_path, code, "tensor([2., 2.])\n")) == [
        ("2.", "exact"),
        ("2.", "exact"),
    ]


def test_random_values_printed_are_the_inputs_of_what_follows(tmp_path: Path) -> None:
    # W is drawn at random, and printed: x @ W = [1·0.5 + 2·0.125, 1·0.25 + 2·1] = [0.75, 2.25]
    # (entries chosen so that the print is exact). The second print is off by 0.1.
    code = (
        "import torch\ntorch.manual_seed(0)\nW = torch.rand(2, 2)\nprint(W)\n"
        "x = torch.tensor([[1.0, 2.0]])\nprint(x @ W)\nprint(x @ W + 0.0)\n"
    )
    out = (
        "tensor([[0.5000, 0.2500],\n        [0.1250, 1.0000]])\n"
        "tensor([[0.7500, 2.2500]])\ntensor([[0.7500, 2.3500]])\n"
    )
    verdicts = _verdicts(_post(tmp_path, code, out))
    assert [p for p, _ in verdicts] == ["0.7500", "2.2500", "0.7500", "2.3500"]
    assert [v in GOOD for _, v in verdicts] == [True, True, True, False]
    assert verdicts[-1][1] == "wrong"  # 2.25 ± 0.00015 at most, wherever W's entries lie


def test_scores_printed_rounded_after_random_weights_stand_for_the_scores(tmp_path: Path) -> None:
    # The weights are random; the scores are printed to 2 decimals. Their true values here
    # are s = [0.1234, -0.4987] (how the case is built): the softmax printed below is of s,
    # to 4 decimals, so it is right for a value the printed scores stand for.
    s = [mpmath.mpf("0.1234"), mpmath.mpf("-0.4987")]
    z = sum(mpmath.exp(v) for v in s)
    w = [mpmath.exp(v) / z for v in s]
    shown = [mpmath.nstr(v, 4, strip_zeros=False) for v in w]  # 0.6507, 0.3493
    assert all(rounds_to(v, t) for v, t in zip(w, shown, strict=True))
    code = (
        "import torch\ntorch.manual_seed(0)\nW = torch.randn(2, 2)\n"
        "x = torch.tensor([[1.0, 2.0]])\nscores = x @ W\nprint(scores.numpy().round(2))\n"
        "weights = torch.softmax(scores, dim=-1)\nprint(weights)\n"
    )
    out = f"[[ 0.12 -0.5 ]]\ntensor([[{shown[0]}, {shown[1]}]])\n"
    verdicts = _verdicts(_post(tmp_path, code, out))
    assert [p for p, _ in verdicts] == shown
    assert all(v in GOOD for _, v in verdicts), verdicts


def test_one_number_printed_by_untranslated_code_is_the_input_of_what_follows(
    tmp_path: Path,
) -> None:
    # The loss comes from a model that is not translated; its print, 2.0000, stands for it
    # (to its printed precision): exp(loss) lies in [exp(1.99995), exp(2.00005)]
    # = [7.38869, 7.38943], and e^2 = 7.389056… rounds to 7.3891. A print of 7.5000 lies
    # outside that range wherever the loss lies within its rounding interval.
    with mpmath.workdps(MPMATH_DIGITS):
        assert rounds_to(mpmath.exp(2), "7.3891")
        assert mpmath.exp(mpmath.mpf("2.00005")) < mpmath.mpf("7.45")
    code = (
        "import torch\nlogits = model(batch)\nloss = logits.mean()\nprint(loss)\n"
        "perplexity = torch.exp(loss)\nprint(perplexity)\n"
    )
    right = _post(tmp_path, code, "tensor(2.0000)\ntensor(7.3891)\n", name="right")
    assert _verdicts(right) == [("7.3891", "rounded")]
    off = _post(tmp_path, code, "tensor(2.0000)\ntensor(7.5000)\n", name="off")
    assert _verdicts(off) == [("7.5000", "wrong")]


# ----------------------------------------------------------------------------- notebook functions


def test_default_arguments_of_the_notebooks_own_functions(tmp_path: Path) -> None:
    # layer_norm([1, 3]) with eps = 1e-5 by default: mean 2, variance 1,
    # (x − 2)/√(1 + 1e-5) = ∓0.99999500003749968750…; with eps=0.5 given: ∓1/√1.5
    x = [mpmath.mpf(1), mpmath.mpf(3)]
    default = [(v - 2) / mpmath.sqrt(1 + mpmath.mpf("1e-5")) for v in x]
    given = [(v - 2) / mpmath.sqrt(mpmath.mpf("1.5")) for v in x]
    code = (
        "import numpy as np\n\ndef layer_norm(x, eps=1e-5):\n    mu = x.mean()\n"
        "    var = ((x - mu) ** 2).mean()\n    return (x - mu) / np.sqrt(var + eps)\n\n"
        "x = np.array([1.0, 3.0])\nprint(layer_norm(x))\nprint(layer_norm(x, eps=0.5))\n"
    )
    out = "[-0.999995  0.999995]\n[-0.81649658  0.81649658]\n"
    assert all(rounds_to(v, t) for v, t in zip(default, ["-0.999995", "0.999995"], strict=True))
    assert all(rounds_to(v, t) for v, t in zip(given, ["-0.81649658", "0.81649658"], strict=True))
    verdicts = _verdicts(_post(tmp_path, code, out))
    assert len(verdicts) == 4 and all(v in GOOD for _, v in verdicts), verdicts


def test_a_function_returning_a_tuple_is_unpacked(tmp_path: Path) -> None:
    # X = [[1, 2], [0, 1]], Wq = [[1, 0], [0, 2]], Wk = [[0, 1], [1, 0]]
    # q = X Wq = [[1, 4], [0, 2]], k = X Wk = [[2, 1], [1, 0]]; q kᵀ = [[6, 1], [2, 0]]
    code = (
        "import numpy as np\nX = np.array([[1.0, 2.0], [0.0, 1.0]])\n"
        "Wq = np.array([[1.0, 0.0], [0.0, 2.0]])\nWk = np.array([[0.0, 1.0], [1.0, 0.0]])\n"
        "def project(x):\n    return x @ Wq, x @ Wk\n\nq, k = project(X)\nprint(q @ k.T)\n"
        "r0, r1 = q\nprint(r0 + r1)\n"
    )
    out = "[[6. 1.]\n [2. 0.]]\n[1. 6.]\n"
    assert _verdicts(_post(tmp_path, code, out)) == [
        ("6.", "exact"),
        ("1.", "exact"),
        ("2.", "exact"),
        ("0.", "exact"),
        ("1.", "exact"),
        ("6.", "exact"),
    ]


# ----------------------------------------------------------------------------- loops and lists


def test_a_print_inside_a_loop_gives_one_claim_per_iteration(tmp_path: Path) -> None:
    # x = [0.5, 1.25, 2]: each iteration prints 2·x[i] to 2 decimals: 1.00, 2.50, 4.00;
    # the third is printed 4.10, off.
    code = (
        "import numpy as np\nx = np.array([0.5, 1.25, 2.0])\nfor i in range(3):\n"
        '    print(f"step {i}: {x[i] * 2:.2f}")\n'
    )
    out = "step 0: 1.00\nstep 1: 2.50\nstep 2: 4.10\n"
    assert _verdicts(_post(tmp_path, code, out)) == [
        ("1.00", "exact"),
        ("2.50", "exact"),
        ("4.10", "wrong"),
    ]


def test_loops_over_enumerate_and_zip_fill_an_array_entry_by_entry(tmp_path: Path) -> None:
    # rows of X = [[1, 2], [3, 4], [0, 1]] dotted with q = [1, 0.5]: [2, 5, 0.5];
    # then zip(X, W) pairs rows: [1,2]·[1,1] = 3, [3,4]·[0,1] = 4, [0,1]·[2,2] = 2
    code = (
        "import numpy as np\nX = np.array([[1.0, 2.0], [3.0, 4.0], [0.0, 1.0]])\n"
        "q = np.array([1.0, 0.5])\nscores = np.zeros(3)\nfor i, x_i in enumerate(X):\n"
        "    scores[i] = x_i @ q\nprint(scores)\n"
        "W = np.array([[1.0, 1.0], [0.0, 1.0], [2.0, 2.0]])\n"
        "pairs = [a @ b for a, b in zip(X, W)]\nprint(np.array(pairs))\n"
    )
    out = "[2.  5.  0.5]\n[3. 4. 2.]\n"
    assert _verdicts(_post(tmp_path, code, out)) == [
        ("2.", "exact"),
        ("5.", "exact"),
        ("0.5", "exact"),
        ("3.", "exact"),
        ("4.", "exact"),
        ("2.", "exact"),
    ]


def test_embeddings_held_in_a_dict_and_stacked_by_a_comprehension(tmp_path: Path) -> None:
    # E["the"] = [0.5, 1], E["cat"] = [1, −1]: stacked for "the cat the", then scaled by 2
    code = (
        "import numpy as np\n"
        'E = {"the": np.array([0.5, 1.0]), "cat": np.array([1.0, -1.0])}\n'
        'tokens = ["the", "cat", "the"]\nX = np.stack([E[w] for w in tokens]) * 2\nprint(X)\n'
    )
    out = "[[ 1.  2.]\n [ 2. -2.]\n [ 1.  2.]]\n"
    assert _verdicts(_post(tmp_path, code, out)) == [
        ("1.", "exact"),
        ("2.", "exact"),
        ("2.", "exact"),
        ("-2.", "exact"),
        ("1.", "exact"),
        ("2.", "exact"),
    ]


def test_vstack_hstack_and_stack(tmp_path: Path) -> None:
    # a = [1, 2], b = [3, 4]: vstack [[1, 2], [3, 4]]; hstack [1, 2, 3, 4];
    # stack on axis 1 [[1, 3], [2, 4]]
    code = (
        "import numpy as np\na = np.array([1.0, 2.0])\nb = np.array([3.0, 4.0])\n"
        "print(np.vstack([a, b]))\nprint(np.hstack([a, b]))\nprint(np.stack([a, b], axis=1))\n"
    )
    out = "[[1. 2.]\n [3. 4.]]\n[1. 2. 3. 4.]\n[[1. 3.]\n [2. 4.]]\n"
    printed = [p for p, _ in _verdicts(_post(tmp_path, code, out))]
    verdicts = [v for _, v in _verdicts(_post(tmp_path, code, out))]
    assert printed == ["1.", "2.", "3.", "4.", "1.", "2.", "3.", "4.", "1.", "3.", "2.", "4."]
    assert set(verdicts) == {"exact"}


def test_softmax_of_an_array_of_expressions(tmp_path: Path) -> None:
    # q·k1 = 1·1 + 0·2 = 1 and q·k2 = 1·0 + 0·1 = 0: softmax([1, 0]) = [e/(e+1), 1/(e+1)]
    e = mpmath.e
    expected = [e / (e + 1), 1 / (e + 1)]
    shown = ["0.73105858", "0.26894142"]
    assert all(rounds_to(v, t) for v, t in zip(expected, shown, strict=True))
    code = (
        "import numpy as np\ndef softmax(z):\n    return np.exp(z) / np.exp(z).sum()\n"
        "q = np.array([1.0, 0.0])\nk1 = np.array([1.0, 2.0])\nk2 = np.array([0.0, 1.0])\n"
        "print(softmax(np.array([q @ k1, q @ k2])))\n"
    )
    verdicts = _verdicts(_post(tmp_path, code, f"[{shown[0]} {shown[1]}]\n"))
    assert [p for p, _ in verdicts] == shown and all(v in GOOD for _, v in verdicts), verdicts


# ----------------------------------------------------------------------------- outputs


def test_a_figure_is_not_a_result_and_holds_no_numbers(tmp_path: Path) -> None:
    # x * 3 = [3, 6]; the figure's "640x480" and "1 Axes" are not printed values
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": 1,
                "metadata": {},
                "source": (
                    "import numpy as np\nimport matplotlib.pyplot as plt\n"
                    "x = np.array([1.0, 2.0])\nplt.plot(x)\nplt.show()\nx * 3\n"
                ),
                "outputs": [
                    {
                        "output_type": "display_data",
                        "data": {"text/plain": "<Figure size 640x480 with 1 Axes>"},
                        "metadata": {},
                    },
                    {
                        "output_type": "execute_result",
                        "execution_count": 1,
                        "data": {"text/plain": "array([3., 6.])"},
                        "metadata": {},
                    },
                ],
            }
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "figure.ipynb"
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    report = check_article(path)
    assert [(c.printed, c.verdict) for c in report.checks] == [("3.", "exact"), ("6.", "exact")]
    assert not report.unchecked


def test_two_prints_sharing_one_output_are_told_apart_by_order(tmp_path: Path) -> None:
    # The first print writes a label line and then an array on lines of their own (two
    # groups of lines for one print); the second prints a sum. A = [[1, 2], [3, 4]]:
    # A + 1 = [[2, 3], [4, 5]], and the sum of A is 10.
    code = (
        "import numpy as np\nA = np.array([[1.0, 2.0], [3.0, 4.0]])\n"
        'print(f"shifted:\\n{A + 1}")\nprint("total:", A.sum())\n'
    )
    out = "shifted:\n[[2. 3.]\n [4. 5.]]\ntotal: 10.0\n"
    assert _verdicts(_post(tmp_path, code, out)) == [
        ("2.", "exact"),
        ("3.", "exact"),
        ("4.", "exact"),
        ("5.", "exact"),
        ("10.0", "exact"),
    ]


def test_a_fully_translated_value_that_disagrees_with_its_print_is_flagged(
    tmp_path: Path,
) -> None:
    # Every op is translated: A @ B with A = [[1, 2]], B = [[3], [4]] is [[11]]; the print
    # says 12. The check, not the search, judges it: wrong (off by 1 in the units).
    code = (
        "import numpy as np\nA = np.array([[1.0, 2.0]])\nB = np.array([[3.0], [4.0]])\n"
        "print(A @ B)\n"
    )
    assert _verdicts(_post(tmp_path, code, "[[12.]]\n")) == [("12.", "wrong")]


def test_a_value_read_loosely_that_disagrees_is_left_with_why(tmp_path: Path) -> None:
    # .to(torch.float16) is read as no change of type: a print that disagrees may be
    # float16's rounding, so it is not judged (1/3 in float16 prints 0.3333 as 0.3333,
    # but this print says 0.3330)
    code = "import torch\nx = torch.tensor([1.0]) / 3\ny = x.to(torch.float16)\nprint(y * 1)\n"
    path = _post(tmp_path, code, "tensor([0.3330], dtype=torch.float16)\n")
    assert _verdicts(path) == []
    (why,) = _unchecked(path)
    assert "translation may be off" in why, why


# ----------------------------------------------------------------------------- comments


def test_values_written_in_code_comments_are_claims(tmp_path: Path) -> None:
    # W h = [[0.5, −1], [0.25, 2]] @ [1, 0.5] = [0.5 − 0.5, 0.25 + 1] = [0, 1.25];
    # y = 2x = [0, 2.5] (the comment says 2.6: off); pe's rows are written one per line
    code = (
        "import numpy as np\nW = np.array([[0.5, -1.0], [0.25, 2.0]])\n"
        "h = np.array([1.0, 0.5])\nx = W @ h  # = [0.0, 1.25]\ny = x * 2  # → [0.0, 2.6]\n"
        "pe = np.array([[0.0, 1.0], [0.84, 0.54]]) * 1.0\n"
        "# Position 0: [0.00, 1.00]\n# Position 1: [0.84, 0.54]\n"
        "z = W.T  # shape: [2, 2]\n"
    )
    assert _verdicts(_post(tmp_path, code)) == [
        ("0.0", "exact"),
        ("1.25", "exact"),
        ("0.0", "exact"),
        ("2.6", "wrong"),
        ("0.00", "exact"),
        ("1.00", "exact"),
        ("0.84", "exact"),
        ("0.54", "exact"),
    ]


def test_a_positional_encoding_filled_through_slices(tmp_path: Path) -> None:
    # pe[p, 2k] = sin(p / 10000^(2k/4)), pe[p, 2k+1] = cos(p / 10000^(2k/4)) for p < 3, k < 2,
    # printed by numpy at 8 decimals after a label naming the shape
    def angle(p: int, i: int) -> mpmath.mpf:
        return mpmath.mpf(p) / mpmath.mpf(10000) ** (mpmath.mpf(2 * (i // 2)) / 4)

    want = [
        [(mpmath.sin if i % 2 == 0 else mpmath.cos)(angle(p, i)) for i in range(4)]
        for p in range(3)
    ]
    # numpy's 8 decimals, trailing zeros dropped; each checked against mpmath below
    shown = [[format(float(v), ".8f").rstrip("0") for v in row] for row in want]
    assert all(
        rounds_to(v, t)
        for row, trow in zip(want, shown, strict=True)
        for v, t in zip(row, trow, strict=True)
    )
    code = (
        "import numpy as np\n\ndef encoding(max_len, d_model):\n"
        "    pos = np.arange(max_len)[:, np.newaxis]\n"
        "    i = np.arange(d_model)[np.newaxis, :]\n"
        "    rates = 1 / np.power(10000, (2 * (i // 2)) / np.float32(d_model))\n"
        "    angles = pos * rates\n"
        "    angles[:, 0::2] = np.sin(angles[:, 0::2])\n"
        "    angles[:, 1::2] = np.cos(angles[:, 1::2])\n"
        "    return angles\n\n"
        "pe = encoding(3, 4)\n"
        'print("Encoding (shape: {}):".format(pe.shape))\nprint(pe)\n'
    )
    text = "\n".join(" ".join(f"{t:>11}" for t in row) for row in shown)
    out = "Encoding (shape: (3, 4)):\n[[" + text.replace("\n", "]\n [") + "]]\n"
    verdicts = _verdicts(_post(tmp_path, code, out))
    assert [p for p, _ in verdicts] == [t for row in shown for t in row]
    assert all(v in GOOD for _, v in verdicts), verdicts


def _printed_table(rows: list[list[mpmath.mpf]], decimals: int) -> list[list[str]]:
    """Each value rounded at ``decimals`` places, trailing zeros dropped as numpy prints
    them (``0.``, ``0.01``), each checked against its exact value."""
    places = Decimal(1).scaleb(-decimals)
    out = []
    for row in rows:
        texts = []
        for v in row:
            with mpmath.workdps(MPMATH_DIGITS):
                exact = Decimal(mpmath.nstr(v, 40, min_fixed=-mpmath.inf, max_fixed=mpmath.inf))
            text = format(exact.quantize(places, ROUND_HALF_EVEN), "f").rstrip("0")
            assert rounds_to(v, text + "0" if text.endswith(".") else text), (v, text)
            texts.append(text)
        out.append(texts)
    return out


def _sinusoidal(positions: int, width: int, base: int, concatenated: bool = False) -> Any:
    """PE[p, 2k] = sin(p / base^(2k/width)), PE[p, 2k+1] = cos(…), at 50 digits; or, with
    ``concatenated``, the sines of every frequency followed by the cosines."""
    with mpmath.workdps(MPMATH_DIGITS):
        half = width // 2
        angle = [
            [mpmath.mpf(p) / mpmath.mpf(base) ** (mpmath.mpf(2 * k) / width) for k in range(half)]
            for p in range(positions)
        ]
        if concatenated:
            return [[mpmath.sin(a) for a in row] + [mpmath.cos(a) for a in row] for row in angle]
        return [[f(a) for a in row for f in (mpmath.sin, mpmath.cos)] for row in angle]


def _numpy_print(table: list[list[str]]) -> str:
    return "[[" + "]\n [".join(" ".join(f"{t:>11}" for t in row) for row in table) + "]]\n"


_PE_LOOPS = (
    "import numpy as np\nimport math\n\nmax_len, d_model = 3, 4\n"
    "pe = np.zeros((max_len, d_model))\n"
    "for pos in range(max_len):\n"
    "    for i in range(0, d_model, 2):\n"
    "        pe[pos, i] = math.sin(pos / (10000 ** (i / d_model)))\n"
    "        pe[pos, i + 1] = math.cos(pos / (10000 ** (i / d_model)))\n"
    "print(pe)\n"
)
_PE_ARANGE_LOOP = (
    "import numpy as np\n\ndef encoding(seq_len, d, n=10000):\n"
    "    P = np.zeros((seq_len, d))\n"
    "    for k in range(seq_len):\n"
    "        for i in np.arange(int(d/2)):\n"
    "            denominator = np.power(n, 2*i/d)\n"
    "            P[k, 2*i] = np.sin(k/denominator)\n"
    "            P[k, 2*i+1] = np.cos(k/denominator)\n"
    "    return P\n\n"
    "print(encoding(seq_len=3, d=4, n=100))\n"
)
_PE_CONCATENATED = (
    "import numpy as np\n\ndef positional_encoding(length, depth):\n"
    "    depth = depth / 2\n"
    "    positions = np.arange(length)[:, np.newaxis]\n"
    "    depths = np.arange(depth)[np.newaxis, :] / depth\n"
    "    angle_rates = 1 / (10000**depths)\n"
    "    angle_rads = positions * angle_rates\n"
    "    return np.concatenate([np.sin(angle_rads), np.cos(angle_rads)], axis=-1)\n\n"
    "print(positional_encoding(3, 4))\n"
)
_PE_DIV_TERM_ROUNDED = (
    "import numpy as np\nimport math\n\nmax_len, d_model = 3, 4\n"
    "pe = np.zeros((max_len, d_model))\n"
    "position = np.arange(0, max_len)[:, np.newaxis]\n"
    "div_term = np.exp(np.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))\n"
    "pe[:, 0::2] = np.sin(position * div_term)\n"
    "pe[:, 1::2] = np.cos(position * div_term)\n"
    "print(np.round(pe, 4))\n"
)


@pytest.mark.parametrize(
    ("code", "base", "concatenated", "decimals"),
    [
        pytest.param(_PE_LOOPS, 10000, False, 8, id="math.sin-entry-by-entry"),
        pytest.param(_PE_ARANGE_LOOP, 100, False, 8, id="loop-over-np.arange-int-d-over-2"),
        pytest.param(_PE_CONCATENATED, 10000, True, 8, id="depth-over-2-concatenated"),
        pytest.param(_PE_DIV_TERM_ROUNDED, 10000, False, 4, id="div-term-np.round"),
    ],
)
def test_positional_encodings_written_the_common_ways(
    tmp_path: Path, code: str, base: int, concatenated: bool, decimals: int
) -> None:
    # exp(-(2k) ln(10000) / d) is 10000^(-2k/d): the div_term form is the same table
    table = _printed_table(_sinusoidal(3, 4, base, concatenated), decimals)
    verdicts = _verdicts(_notebook(tmp_path, [(code, _numpy_print(table))]))
    assert [p for p, _ in verdicts] == [t for row in table for t in row]
    assert all(v in GOOD for _, v in verdicts), verdicts


def test_a_torch_positional_encoding_with_an_arange_of_floats(tmp_path: Path) -> None:
    code = (
        "import torch\nimport math\n\nmax_len, d_model = 3, 4\n"
        "pe = torch.zeros(max_len, d_model)\n"
        "position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)\n"
        "div_term = torch.exp(torch.arange(0, d_model, 2).float()"
        " * (-math.log(10000.0) / d_model))\n"
        "pe[:, 0::2] = torch.sin(position * div_term)\n"
        "pe[:, 1::2] = torch.cos(position * div_term)\n"
        "print(pe)\n"
    )
    table = _printed_table(_sinusoidal(3, 4, 10000), 4)
    # PyTorch pads every entry to 4 decimals
    padded = [[(t + "0000")[: t.index(".") + 5] for t in row] for row in table]
    out = "tensor([[" + "],\n        [".join(", ".join(row) for row in padded) + "]])\n"
    verdicts = _verdicts(_notebook(tmp_path, [(code, out)]))
    assert [p for p, _ in verdicts] == [t for row in padded for t in row]
    assert all(v in GOOD for _, v in verdicts), verdicts


def test_a_swapped_digit_in_a_positional_encoding_is_flagged(tmp_path: Path) -> None:
    # sin(1) = 0.84147098…; printed 0.84147089 (the last two digits swapped)
    table = _printed_table(_sinusoidal(3, 4, 10000), 8)
    assert table[1][0] == "0.84147098"
    table[1][0] = "0.84147089"
    with mpmath.workdps(MPMATH_DIGITS):
        assert not rounds_to(mpmath.sin(1), "0.84147089")
    verdicts = _verdicts(_notebook(tmp_path, [(_PE_LOOPS, _numpy_print(table))]))
    off = [(p, v) for p, v in verdicts if v not in GOOD]
    assert off == [("0.84147089", "wrong")]
    assert len(verdicts) == 12


def test_values_printed_through_percent_formats(tmp_path: Path) -> None:
    # c = [1.5 * 3, 2 * 0.25] = [4.5, 0.5]; c.sum() = 5 (printed %.4f); e^2 = 7.389056…
    # (printed %.2e); x = 2.75 printed with %d is 2, a truncation, not the value
    code = (
        "import numpy as np\n"
        "a, b = np.array([1.5, 2.0]), np.array([3.0, 0.25])\n"
        "c = a * b\n"
        'print("sum = %.4f, e^2 = %.2e" % (c.sum(), np.exp(2.0)))\n'
        "x = 2.75\n"
        'print("%d items" % x)\n'
        'print("%.3f%% left" % c[1])\n'
    )
    with mpmath.workdps(MPMATH_DIGITS):
        assert rounds_to(mpmath.e**2, "7.39e+00")
        assert not rounds_to(mpmath.mpf("2.75"), "2")
    out = "sum = 5.0000, e^2 = 7.39e+00\n2 items\n0.500% left\n"
    verdicts = _verdicts(_notebook(tmp_path, [(code, out)]))
    assert sorted(verdicts) == [("0.500", "exact"), ("5.0000", "exact"), ("7.39e+00", "rounded")]
    assert any("truncates" in u for u in _unchecked(_notebook(tmp_path, [(code, out)], "nb2")))


def test_a_percent_formatted_value_that_is_off_is_flagged(tmp_path: Path) -> None:
    # softmax([1, 2, 3])[2] = e^3 / (e + e^2 + e^3) = 0.665240955…, printed 0.6625
    code = (
        "import numpy as np\n"
        "z = np.array([1.0, 2.0, 3.0])\n"
        "s = np.exp(z) / np.exp(z).sum()\n"
        'print("top = %.4f" % s[2])\n'
    )
    with mpmath.workdps(MPMATH_DIGITS):
        top = mpmath.e**3 / (mpmath.e + mpmath.e**2 + mpmath.e**3)
        assert rounds_to(top, "0.6652") and not rounds_to(top, "0.6625")
    verdicts = _verdicts(_notebook(tmp_path, [(code, "top = 0.6625\n")]))
    assert len(verdicts) == 1 and verdicts[0][0] == "0.6625"
    assert verdicts[0][1] not in GOOD


def test_a_general_format_counts_significant_digits_not_decimals(tmp_path: Path) -> None:
    # 1.5049 with {:.3} prints 1.5 (three significant digits, a trailing zero dropped): it
    # stands for [1.45, 1.55), not for 1.500
    code = 'import numpy as np\nx = np.array([1.5049, 0.0])\nprint(f"{x.sum():.3}")\n'
    assert format(1.5049, ".3") == "1.5"
    verdicts = _verdicts(_notebook(tmp_path, [(code, "1.5\n")]))
    assert verdicts == [("1.5", "rounded")]


def _float32(x: mpmath.mpf) -> mpmath.mpf:
    """The float32 nearest ``x`` (24 significant bits; no tie arises in these cases)."""
    if not x:
        return mpmath.mpf(0)
    ulp = mpmath.mpf(2) ** (mpmath.floor(mpmath.log(abs(x), 2)) - 23)
    return mpmath.nint(x / ulp) * ulp


def test_a_torch_buffer_filled_entry_by_entry_is_float32(tmp_path: Path) -> None:
    # pe[p, 1] = cos(p / 10000^(2/4)) = cos(p / 100); cos(0.01) = 0.99995000042, which
    # rounds to 1.0000, but torch.zeros holds float32 and the float32 nearest it,
    # 0.9999499917…, prints 0.9999: right for the code, not a slip
    code = (
        "import torch\nimport math\n\nd_model, max_len = 4, 3\n"
        "pe = torch.zeros(max_len, d_model)\n"
        "for pos in range(max_len):\n"
        "    for i in range(0, d_model, 2):\n"
        "        pe[pos, i] = math.sin(pos / (10000 ** ((2 * i) / d_model)))\n"
        "        pe[pos, i + 1] = math.cos(pos / (10000 ** ((2 * (i + 1)) / d_model)))\n"
        "print(pe)\n"
    )
    with mpmath.workdps(MPMATH_DIGITS):
        exact = [
            [
                f(mpmath.mpf(p) / mpmath.mpf(10000) ** (mpmath.mpf(2 * c) / 4))
                for c, f in enumerate((mpmath.sin, mpmath.cos, mpmath.sin, mpmath.cos))
            ]
            for p in range(3)
        ]
        # the exponents the code writes: 2i/4 for the sine of column i, 2(i+1)/4 for the cosine
        stored = [[_float32(v) for v in row] for row in exact]
        printed = _printed_table(stored, 4)
        assert printed[1][1] == "0.9999" and not rounds_to(exact[1][1], "0.9999")
    padded = [[(t + "0000")[: t.index(".") + 5] for t in row] for row in printed]
    out = "tensor([[" + "],\n        [".join(", ".join(row) for row in padded) + "]])\n"
    verdicts = _verdicts(_notebook(tmp_path, [(code, out)]))
    assert [p for p, _ in verdicts] == [t for row in padded for t in row]
    assert all(v in GOOD for _, v in verdicts), verdicts


def test_tf_cast_to_float32_is_the_value_itself(tmp_path: Path) -> None:
    code = (
        "import numpy as np\nimport tensorflow as tf\n\n"
        "def positional_encoding(length, depth):\n"
        "    depth = depth / 2\n"
        "    positions = np.arange(length)[:, np.newaxis]\n"
        "    depths = np.arange(depth)[np.newaxis, :] / depth\n"
        "    angle_rads = positions * (1 / (10000**depths))\n"
        "    pos_encoding = np.concatenate([np.sin(angle_rads), np.cos(angle_rads)], axis=-1)\n"
        "    return tf.cast(pos_encoding, dtype=tf.float32)\n\n"
        "print(np.round(positional_encoding(3, 4).numpy(), 4))\n"
    )
    with mpmath.workdps(MPMATH_DIGITS):
        exact = _sinusoidal(3, 4, 10000, concatenated=True)
        printed = _printed_table([[_float32(v) for v in r] for r in exact], 4)
        # cos(0.01) = 0.99995000042 rounds to 1.0000; its float32, 0.9999499917…, to 0.9999
        assert printed[1][3] == "0.9999" and not rounds_to(exact[1][3], "0.9999")
    verdicts = _verdicts(_notebook(tmp_path, [(code, _numpy_print(printed))]))
    assert [p for p, _ in verdicts] == [t for row in printed for t in row]
    assert all(v in GOOD for _, v in verdicts), verdicts


def test_an_accumulator_made_in_the_shape_of_another_tensor_is_unrolled(tmp_path: Path) -> None:
    # ctx = zeros(query.shape); ctx += w[i] * x_i over the rows of x = [[1, 2], [3, 4]],
    # w = [0.25, 0.75]: 0.25 * [1, 2] + 0.75 * [3, 4] = [0.25 + 2.25, 0.5 + 3] = [2.5, 3.5].
    # The second notebook prints 3.6000 for 3.5: off by 1000 units of 0.0001.
    code = (
        "import torch\nx = torch.tensor([[1.0, 2.0], [3.0, 4.0]])\n"
        "w = torch.tensor([0.25, 0.75])\nquery = x[1]\nctx = torch.zeros(query.shape)\n"
        "for i, x_i in enumerate(x):\n    ctx += w[i] * x_i\nprint(ctx)\n"
    )
    right = _notebook(tmp_path, [(code, "tensor([2.5000, 3.5000])\n")], name="right")
    assert _verdicts(right) == [("2.5000", "exact"), ("3.5000", "exact")]
    off = _notebook(tmp_path, [(code, "tensor([2.5000, 3.6000])\n")], name="off")
    assert _verdicts(off) == [("2.5000", "exact"), ("3.6000", "wrong")]


def test_python_sum_of_a_list_of_numbers_is_their_sum(tmp_path: Path) -> None:
    # sum([0.125, 0.25, 0.5]) = 0.875 exactly; sum([0.5, 0.375]) = 0.875, printed 0.6:
    # off by 0.275, more than one unit (0.1) of its last digit.
    path = _notebook(
        tmp_path,
        [
            ("s = sum([0.125, 0.25, 0.5])\nprint('total:', s)\n", "total: 0.875\n"),
            ("t = sum((0.5, 0.375))\nprint('other:', round(t, 1))\n", "other: 0.6\n"),
        ],
    )
    assert _verdicts(path) == [("0.875", "exact"), ("0.6", "wrong")]


def test_a_count_printed_with_grouped_digits_is_one_number_read_by_what_follows(
    tmp_path: Path,
) -> None:
    # {total:,} prints 2,621,440 (one number, its digits grouped by threes); the size that
    # follows is 2621440 * 4 / (1024 * 1024) = 10485760 / 1048576 = 10 exactly. The second
    # notebook prints 12.00: off by 200 units of 0.01.
    code = (
        "total = sum(p.numel() for p in model.parameters())\n"
        'print(f"Total number of parameters: {total:,}")\n'
        'size_mb = total * 4 / (1024 * 1024)\nprint(f"Size: {size_mb:.2f} MB")\n'
    )
    right = _notebook(
        tmp_path, [(code, "Total number of parameters: 2,621,440\nSize: 10.00 MB\n")], "right"
    )
    assert _verdicts(right) == [("10.00", "exact")]
    off = _notebook(
        tmp_path, [(code, "Total number of parameters: 2,621,440\nSize: 12.00 MB\n")], "off"
    )
    assert _verdicts(off) == [("12.00", "wrong")]


_LAYER_NORM_CLASS = (
    "import torch\nimport torch.nn as nn\n\n\nclass LayerNorm(nn.Module):\n"
    "    def __init__(self, emb_dim):\n        super().__init__()\n        self.eps = 1e-5\n"
    "        self.scale = nn.Parameter(torch.ones(emb_dim))\n"
    "        self.shift = nn.Parameter(torch.zeros(emb_dim))\n\n"
    "    def forward(self, x):\n        mean = x.mean(dim=-1, keepdim=True)\n"
    "        var = x.var(dim=-1, keepdim=True, unbiased=False)\n"
    "        norm_x = (x - mean) / torch.sqrt(var + self.eps)\n"
    "        return self.scale * norm_x + self.shift\n"
)


def test_a_module_class_of_the_notebook_is_computed_where_its_instance_is_called(
    tmp_path: Path,
) -> None:
    # Rows [1, 3] and [2, 2.5]: means 2 and 2.25, variances (n divisor) 1 and 0.0625, so
    # (x - mean) / sqrt(var + 1e-5) = ±1/sqrt(1.00001) and ±0.25/sqrt(0.06251), by mpmath
    # ±0.999995… and ±0.999920…: -1.0000, 1.0000, -0.9999, 0.9999. The second notebook
    # prints 0.9992 for 0.9999: seven units of its last digit off.
    with mpmath.workdps(MPMATH_DIGITS):
        a = 1 / mpmath.sqrt(mpmath.mpf("1.00001"))
        b = mpmath.mpf("0.25") / mpmath.sqrt(mpmath.mpf("0.06251"))
    assert rounds_to(-a, "-1.0000") and rounds_to(b, "0.9999")
    call = "x = torch.tensor([[1.0, 3.0], [2.0, 2.5]])\nln = LayerNorm(emb_dim=2)\nprint(ln(x))\n"
    right = _notebook(
        tmp_path,
        [
            (_LAYER_NORM_CLASS, None),
            (call, "tensor([[-1.0000,  1.0000],\n        [-0.9999,  0.9999]])\n"),
        ],
        "right",
    )
    assert [v in GOOD for _, v in _verdicts(right)] == [True] * 4
    off = _notebook(
        tmp_path,
        [
            (_LAYER_NORM_CLASS, None),
            (call, "tensor([[-1.0000,  1.0000],\n        [-0.9999,  0.9992]])\n"),
        ],
        "off",
    )
    assert [v for _, v in _verdicts(off)][3] == "wrong"


def test_a_module_instance_made_with_more_settings_than_its_class_takes_is_not_read(
    tmp_path: Path,
) -> None:
    # Scale(2.0, 3.0) gives __init__(self, k) two values: that instance is left unread
    # (said so), never bound out of place; Scale(k=0.5) of [1, 2] is [0.5, 1] exactly.
    cls = (
        "import torch\nimport torch.nn as nn\n\n\nclass Scale(nn.Module):\n"
        "    def __init__(self, k):\n        super().__init__()\n        self.k = k\n\n"
        "    def forward(self, x):\n        return x * self.k\n"
    )
    call = (
        "s = Scale(2.0, 3.0)\nprint(s(torch.tensor([1.0, 2.0])))\n"
        "t = Scale(k=0.5)\nprint(t(torch.tensor([1.0, 2.0])))\n"
    )
    path = _notebook(
        tmp_path, [(cls, None), (call, "tensor([2., 4.])\ntensor([0.5000, 1.0000])\n")]
    )
    assert _verdicts(path) == [("0.5000", "exact"), ("1.0000", "exact")]
    assert any("does not match its module" in why for why in _unchecked(path))
