"""Loops that fill lists and arrays in a worked example's code, unrolled when their items are
known, and left untranslated (with the reason) when they are not or cannot be exact.

Each case is a post written here. Expected values come from mpmath at 50 digits or from
the hand arithmetic written beside them; none is read from symtf's output. The code is
read with ``ast`` and never run: the outputs are written by hand.
"""

from __future__ import annotations

from pathlib import Path

import mpmath
from mp_reference import rounds_to

from symtf.commands.draft import check_article
from symtf.draft import draft_file

MPMATH_DIGITS = 50


def _post(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "post.md"
    path.write_text(text, encoding="utf-8")
    return path


def _verdicts(path: Path) -> list[tuple[int | None, str, str]]:
    """(line, printed, verdict) of every checked number, by the number's own line."""
    out = []
    for r in check_article(path).results:
        places = r.claim.places
        for k, c in enumerate(r.checks):
            line = places[k].line if len(places) == len(r.checks) else r.claim.source_line
            out.append((line, c.printed, c.verdict))
    return out


def _theta(i: int, width: int = 256, base: int = 10000) -> mpmath.mpf:
    return mpmath.power(base, mpmath.mpf(-2 * i) / width)


_FREQUENCIES = """# Frequencies of a rotary embedding

```python
d_model = 256
num_pairs = d_model // 2  # 128 pairs
base = 10000

freqs = []
for i in range(num_pairs):
    theta_i = base ** (-2 * i / d_model)
    freqs.append(theta_i)

# freqs = [1.0, THETA1, THETA2, ..., 0.0001]
```
"""


def test_a_loop_of_128_pairs_is_unrolled_and_a_named_comment_restates_its_list(
    tmp_path: Path,
) -> None:
    # θ_i = 10000^(-2i/256): θ_1 = 0.930572…, θ_2 = 0.865964…, θ_127 = 0.000107…; the
    # comment writes the list with entries left out: the first three and the last one
    # are at their places (0, 1, 2 and 127).
    t1, t2, t127 = _theta(1), _theta(2), _theta(127)
    assert rounds_to(t1, "0.9306") and rounds_to(t2, "0.8660") and rounds_to(t127, "0.0001")
    text = _FREQUENCIES.replace("THETA1", "0.9306").replace("THETA2", "0.8660")
    got = _verdicts(_post(tmp_path, text))
    assert sorted(got) == [
        (13, "0.0001", "rounded"),
        (13, "0.8660", "rounded"),
        (13, "0.9306", "rounded"),
        (13, "1.0", "exact"),
    ]


def test_a_wrong_entry_of_a_restated_list_is_flagged_and_the_others_are_not(
    tmp_path: Path,
) -> None:
    # 0.982 is not θ_1 = 0.930572… (0.982 = 10000^(-x) for x ≈ 0.00197, not 2/256); θ_2
    # is written right.
    assert not rounds_to(_theta(1), "0.982")
    text = _FREQUENCIES.replace("THETA1", "0.982").replace("THETA2", "0.8660")
    got = {(printed, verdict) for _, printed, verdict in _verdicts(_post(tmp_path, text))}
    assert ("0.982", "wrong") in got or ("0.982", "slip") in got
    assert {("1.0", "exact"), ("0.8660", "rounded"), ("0.0001", "rounded")} <= got


def test_a_list_of_numbers_filled_in_a_loop_prints_as_one_list(tmp_path: Path) -> None:
    # 10000^(-2i/8) for i = 0..3 is 10^(-i): 1, 0.1, 0.01, 0.001 (exact); the print is
    # Python's list of them, one bracket.
    text = (
        "```python\nfreqs = []\nfor i in range(4):\n"
        "    freqs.append(10000 ** (-2 * i / 8))\nprint(freqs)\n```\n\n"
        "```\n[1.0, 0.1, 0.01, 0.002]\n```\n"
    )
    got = _verdicts(_post(tmp_path, text))
    assert [(p, v) for _, p, v in got][:3] == [
        ("1.0", "exact"),
        ("0.1", "exact"),
        ("0.01", "exact"),
    ]
    assert got[3][1:] in (("0.002", "wrong"), ("0.002", "slip"))


def test_rotary_pairs_filled_at_two_i_and_two_i_plus_one(tmp_path: Path) -> None:
    # out[2i] = sin(θ_i), out[2i+1] = cos(θ_i) with θ_i = 10000^(-2i/6), i = 0, 1, 2
    values = []
    for i in range(3):
        th = _theta(i, width=6)
        values += [mpmath.sin(th), mpmath.cos(th)]
    printed = ["0.84147098", "0.54030231", "0.04639922", "0.99892298", "0.00215443", "0.99999768"]
    assert all(rounds_to(v, p) for v, p in zip(values, printed, strict=True))
    text = (
        "```python\nimport numpy as np\nd = 6\nout = np.zeros(d)\n"
        "for i in range(d // 2):\n    theta = 10000 ** (-2 * i / d)\n"
        "    out[2 * i] = np.sin(theta)\n    out[2 * i + 1] = np.cos(theta)\nprint(out)\n```\n\n"
        f"```\n[{' '.join(printed)}]\n```\n"
    )
    got = _verdicts(_post(tmp_path, text))
    assert [(p, v) for _, p, v in got] == [(p, "rounded") for p in printed]


def _notes(path: Path) -> str:
    toml = draft_file(path).toml
    return "\n".join(line for line in toml.splitlines() if line.startswith("#   line"))


def test_a_loop_not_unrolled_says_why(tmp_path: Path) -> None:
    text = (
        "```python\nimport numpy as np\nseq_len = len(open('x').read())\nn = 300\n"
        "a = np.zeros(n)\nfor i in range(n):\n    a[i] = i * 0.5\n"
        "b = np.zeros(4)\nfor i in range(seq_len):\n    b[i] = 1.0\n"
        "c = np.zeros((80, 80))\nfor i in range(80):\n    for j in range(80):\n"
        "        c[i, j] = 1.0\n```\n"
    )
    notes = _notes(_post(tmp_path, text))
    assert "a loop over range(n) is not unrolled: it has 300 items, more than the 256" in notes
    assert "a loop over range(seq_len) is not unrolled: seq_len" in notes
    assert "a loop of 80 iterations inside loops of 80 is not unrolled" in notes


def test_a_loop_dotting_with_a_number_invents_no_value(tmp_path: Path) -> None:
    # query = inputs.shape[0] is the number 3: torch.dot(x_i, 3) is an error in PyTorch, so
    # the loop computes nothing; the printed scores are not the loop's. Its reason is
    # given once, and no number is judged from the loop.
    text = (
        "```python\nimport torch\ninputs = torch.tensor([[0.5, 0.1], [0.2, 0.7], [0.9, 0.3]])\n"
        "query = inputs.shape[0]\nscores = torch.empty(inputs.shape[0])\n"
        "for i, x_i in enumerate(inputs):\n    scores[i] = torch.dot(x_i, query)\n"
        "total = scores.sum()\nprint(total)\n```\n\n```\ntensor(4.5000)\n```\n"
    )
    path = _post(tmp_path, text)
    notes = _notes(path)
    assert notes.count("#   line 7:") == 1
    assert (
        "line 7: scores[i] = torch.dot(x_i, query): a matrix product (dot, matmul, @) with the number 3 as a factor is not translated"
        in notes
    )
    assert "filled entry by entry" not in notes
    assert all(v not in ("slip", "wrong") for _, _, v in _verdicts(path))


def test_a_slice_written_after_masked_fill_in_place_is_a_printing_of_the_masked_slice(
    tmp_path: Path,
) -> None:
    # The code does not compute attn_scores (queries is not defined) but writes its slice
    # [0][0], masks it in place with the causal mask (-inf above the diagonal) and writes
    # the slice again: the second literal is the first one masked. 0.5 is written where
    # the slice holds 0.6 (hand check: masking leaves the lower triangle as it was).
    text = (
        "```python\nimport torch\nattn_scores = queries @ keys.transpose(2, 3)\n"
        "attn_scores[0][0] = [[0.8, 0.2, 0.1],\n"
        "                     [0.3, 0.9, 0.4],\n"
        "                     [0.1, 0.6, 0.7]]\n"
        "mask_bool = torch.triu(torch.ones(3, 3), diagonal=1).bool()\n"
        "attn_scores.masked_fill_(mask_bool, -torch.inf)\n"
        "attn_scores[0][0] = [[0.8, -inf, -inf],\n"
        "                     [0.3, 0.9, -inf],\n"
        "                     [0.1, 0.5, 0.7]]\n```\n"
    )
    got = _verdicts(_post(tmp_path, text))
    assert sorted(got) == [
        (9, "-inf", "exact"),
        (9, "-inf", "exact"),
        (9, "0.8", "exact"),
        (10, "-inf", "exact"),
        (10, "0.3", "exact"),
        (10, "0.9", "exact"),
        (11, "0.1", "exact"),
        (11, "0.5", "wrong"),
        (11, "0.7", "exact"),
    ]


def test_masked_fill_in_place_of_a_computed_tensor_is_its_masked_value(tmp_path: Path) -> None:
    # S masked in place with the causal mask: [[0.8, -inf], [0.3, 0.9]]; 0.91 is printed
    # where 0.9 (0.9000 to torch's four decimals) belongs.
    text = (
        "```python\nimport torch\nS = torch.tensor([[0.8, 0.2], [0.3, 0.9]])\n"
        "mask = torch.triu(torch.ones(2, 2), diagonal=1).bool()\n"
        "S.masked_fill_(mask, -torch.inf)\nprint(S)\n```\n\n"
        "```\ntensor([[0.8000,   -inf],\n        [0.3000, 0.9100]])\n```\n"
    )
    path = _post(tmp_path, text)
    assert "masked_fill_" not in _notes(path)
    got = {(p, v) for _, p, v in _verdicts(path)}
    assert ("0.9100", "wrong") in got or ("0.9100", "slip") in got
    assert {("0.8000", "exact"), ("-inf", "exact"), ("0.3000", "exact")} <= got


def test_pairs_rotated_into_a_repeated_list_by_unpacking_into_entries(tmp_path: Path) -> None:
    # out = [0.0] * d is four zeros (a list repeated, not multiplied); pair k of vec is
    # rotated by θ = m·10000^(-2k/d): (1, 2) by 2 and (3, 4) by 2·10000^(-1/2) = 0.02.
    # Each is printed rounded to 6 decimals; the last is printed 4.0599 where
    # 3·sin(0.02) + 4·cos(0.02) = 4.059196… belongs.
    th0, th1 = mpmath.mpf(2), 2 * _theta(1, width=4)
    rotated = [
        1 * mpmath.cos(th0) - 2 * mpmath.sin(th0),
        1 * mpmath.sin(th0) + 2 * mpmath.cos(th0),
        3 * mpmath.cos(th1) - 4 * mpmath.sin(th1),
        3 * mpmath.sin(th1) + 4 * mpmath.cos(th1),
    ]
    printed = ["-2.234742", "0.077004", "2.919405", "4.059900"]
    assert [rounds_to(v, p) for v, p in zip(rotated, printed, strict=True)] == [
        True,
        True,
        True,
        False,
    ]
    text = (
        "```python\nimport math\nimport numpy as np\n\ndef rotate_pair(x, y, theta):\n"
        "    c, s = math.cos(theta), math.sin(theta)\n"
        "    return x * c - y * s, x * s + y * c\n\n"
        "def rope_rotate(vec, m, base=10000.0):\n    d = len(vec)\n    out = [0.0] * d\n"
        "    for k in range(d // 2):\n        i, j = 2 * k, 2 * k + 1\n"
        "        theta = m * (base ** (-(2 * k) / d))\n"
        "        out[i], out[j] = rotate_pair(vec[i], vec[j], theta)\n    return out\n\n"
        "print(np.round(rope_rotate([1.0, 2.0, 3.0, 4.0], m=2), 6))\n```\n\n"
        f"```\n[{'  '.join(printed)}]\n```\n"
    )
    got = [(p, v) for _, p, v in _verdicts(_post(tmp_path, text))]
    assert got[:3] == [(p, "rounded") for p in printed[:3]]
    assert got[3] in (("4.059900", "wrong"), ("4.059900", "slip"))


def test_a_python_list_times_a_number_is_the_list_repeated(tmp_path: Path) -> None:
    # [1.0, 2.0] * 2 is [1.0, 2.0, 1.0, 2.0] in Python (not [2.0, 4.0])
    text = (
        "```python\nimport numpy as np\nx = [1.0, 2.0] * 2\nprint(np.array(x))\n```\n\n"
        "```\n[1. 2. 1. 2.]\n```\n"
    )
    got = [(p, v) for _, p, v in _verdicts(_post(tmp_path, text))]
    assert got == [("1.", "exact"), ("2.", "exact"), ("1.", "exact"), ("2.", "exact")]


def test_an_array_made_of_the_list_a_loop_appended_to_under_the_same_name(
    tmp_path: Path,
) -> None:
    # scores = [x·q for x in rows], q = [0.2, 0.7]: 0.5·0.2 + 0.1·0.7 = 0.17,
    # 0.2·0.2 + 0.7·0.7 = 0.53, 0.9·0.2 + 0.3·0.7 = 0.39; then scores = torch.tensor(scores)
    # makes the tensor of that list; twice it is printed: 0.34 and 0.78 are right, 1.05 is
    # printed where 2·0.53 = 1.06 belongs.
    text = (
        "```python\nimport torch\ninputs = torch.tensor([[0.5, 0.1], [0.2, 0.7], [0.9, 0.3]])\n"
        "q = inputs[1]\nscores = []\nfor x in inputs:\n    scores.append(torch.dot(x, q))\n"
        "scores = torch.tensor(scores)\nprint(2 * scores)\n```\n\n"
        "```\ntensor([0.3400, 1.0500, 0.7800])\n```\n"
    )
    path = _post(tmp_path, text)
    assert "scores" not in _notes(path)
    got = [(p, v) for _, p, v in _verdicts(path)]
    assert got[0] == ("0.3400", "exact") and got[2] == ("0.7800", "exact")
    assert got[1] in (("1.0500", "wrong"), ("1.0500", "slip"))


def test_a_loop_over_a_classs_attribute_names_it_as_written(tmp_path: Path) -> None:
    # The comprehension reads self.heads inside a method: the reason it is not unrolled
    # names self.heads, never an empty name.
    text = (
        "```python\nimport torch\nimport torch.nn as nn\n\nclass Wrapper(nn.Module):\n"
        "    def __init__(self, n):\n        super().__init__()\n"
        "        self.heads = nn.ModuleList([Head() for _ in range(n)])\n\n"
        "    def forward(self, x):\n"
        "        return torch.cat([head(x) for head in self.heads], dim=-1)\n```\n\n"
        "```python\nw = Wrapper(2)\ny = w(torch.tensor([[1.0, 2.0]]))\nprint(y)\n```\n"
    )
    notes = _notes(_post(tmp_path, text))
    assert "a comprehension over self.heads is not unrolled" in notes
    assert "a comprehension over  is" not in notes


def test_a_comprehension_of_128_frequencies_is_unrolled_as_the_loop_is(tmp_path: Path) -> None:
    # the same θ_i = 10000^(-2i/256) as the loop above, written as a list comprehension
    t1, t2, t127 = _theta(1), _theta(2), _theta(127)
    assert rounds_to(t1, "0.9306") and rounds_to(t2, "0.8660") and rounds_to(t127, "0.0001")
    text = (
        "```python\nd_model = 256\nbase = 10000\n"
        "freqs = [base ** (-2 * i / d_model) for i in range(d_model // 2)]\n\n"
        "# freqs = [1.0, 0.9306, 0.8661, ..., 0.0001]\n```\n"
    )
    got = sorted((p, v) for _, p, v in _verdicts(_post(tmp_path, text)))
    assert ("0.8661", "wrong") in got or ("0.8661", "slip") in got
    assert {("1.0", "exact"), ("0.9306", "rounded"), ("0.0001", "rounded")} <= set(got)


def test_a_named_comment_after_a_function_is_not_a_value_of_the_code_around(
    tmp_path: Path,
) -> None:
    # out is [1, 2] where the comment stands: the function's own out (2·x) is not it, and
    # defining the function runs nothing, so the comment restates no value of the code.
    text = (
        "```python\nimport numpy as np\nout = np.array([1.0, 2.0])\n\n"
        "def double(x):\n    out = 2 * x\n    return out\n\n# out = [2.0, 4.0]\n```\n"
    )
    path = _post(tmp_path, text)
    assert _verdicts(path) == []
    notes = [getattr(u, "note", "") for u in check_article(path).unchecked]
    assert notes and not any("the code computes" in n for n in notes)
