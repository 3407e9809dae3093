"""Printouts as articles paste them, scalars and indices as a reader writes them.

Each case is constructed here with its own numbers; the expected verdict follows from
how it was made (an exact value that equals or rounds to the print, or one that does
not), never from symtf's output.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from symtf import spec
from symtf.checking.compare import check
from symtf.errors import SpecError

GOOD = ("exact", "rounded")
ROOT = Path(__file__).resolve().parent.parent


def _checks(text: str) -> list:
    return check(spec.loads(text)).checks


def _run(tmp_path: Path, text: str, *args: str) -> subprocess.CompletedProcess[str]:
    f = tmp_path / "case.toml"
    f.write_text(text, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "symtf", "check", str(f), *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )


# ----------------------------------------------------------------------------- pasted prints


@pytest.mark.parametrize(
    ("printed", "value"),
    [("tensor(0.0430)", "0.043"), ("tensor(-10.7940)", "-10.794"), ("np.float64(0.25)", "0.25")],
)
def test_zero_dimensional_prints_are_read(printed: str, value: str) -> None:
    text = f"""title = "0-d"
[tensors]
x = "{value}"
[steps]
y = "x * 1"
[[claims]]
label = "y"
step = "y"
printed = "{printed}"
"""
    (c,) = _checks(text)
    assert c.verdict == "exact", c.explanation


def test_a_four_dimensional_print_is_read_whole() -> None:
    # shape (2, 2, 2, 2): the entries 1..16 / 8, printed the way torch prints them
    values = " ".join(str(k) for k in range(1, 17))
    printed = (
        "tensor([[[[0.1250, 0.2500], [0.3750, 0.5000]], [[0.6250, 0.7500], [0.8750, 1.0000]]],"
        " [[[1.1250, 1.2500], [1.3750, 1.5000]], [[1.6250, 1.7500], [1.8750, 2.0000]]]])"
    )
    text = f'''title = "4-D"
[tensors]
T = {{ shape = [2, 2, 2, 2], values = "{values}" }}
[steps]
Y = "T / 8"
[[claims]]
label = "Y"
step = "Y"
printed = "{printed}"
'''
    checks = _checks(text)
    assert len(checks) == 16
    assert all(c.verdict == "exact" for c in checks)
    assert checks[5].index == (0, 1, 0, 1)  # 0.75: batch 0, head 1, row 0, column 1


def test_thousands_separators_are_read() -> None:
    text = """title = "a parameter count"
[tensors]
d = "1234"
[steps]
n = "d * 1000 + 567"
[[claims]]
label = "count"
step = "n"
printed = "1,234,567"
[[claims]]
label = "line"
expression = "1234 × 1000 + 567"
printed = "1,234,567"
"""
    checks = _checks(text)
    assert [c.verdict for c in checks] == ["exact", "exact"]
    assert checks[0].printed == "1,234,567"  # the report shows the print as written


def test_a_table_with_header_labels_is_read() -> None:
    text = '''title = "attention weights"
[tensors]
S = """
0 -inf -inf
0.2 -0.3 -inf
1 0.5 -0.25
"""
[steps]
A = "softmax(S, axis=-1)"
[[claims]]
label = "A"
step = "A"
printed = """
(query→)   I      love   AI
I          1.000  0.000  0.000
love       0.622  0.378  0.000
AI         0.528  0.320  0.151
"""
'''
    checks = _checks(text)
    assert len(checks) == 9
    assert all(c.verdict in GOOD for c in checks), [c.explanation for c in checks]


def test_a_label_among_the_numbers_is_called_a_label() -> None:
    text = """title = "t"
[tensors]
x = ["1", "2"]
[[claims]]
label = "x"
step = "x"
printed = "1 (query→) 2"
"""
    with pytest.raises(SpecError) as e:
        spec.loads(text)
    assert "label '(query→)'" in str(e.value)
    assert "ASCII" not in str(e.value) and "U+2192" not in str(e.value)


def test_a_percentage_on_an_expression_is_read(tmp_path: Path) -> None:
    text = """title = "a share"
[[claims]]
label = "share"
expression = "5.652 / 21.372"
printed = "26.4%"
[[claims]]
label = "wrong share"
expression = "5.652 / 21.372"
printed = "26.6%"
"""
    r = _run(tmp_path, text, "--format", "json")
    assert r.returncode == 1, r.stderr
    checks = json.loads(r.stdout)["derivations"][0]["checks"]
    assert [c["verdict"] for c in checks] == ["rounded", "wrong"]  # 26.4458…%


def test_numpy_print_form_is_read_on_the_grid_of_its_repr() -> None:
    # numpy prints 8 decimals and strips trailing zeros: "-0.0312787" in a row of 8-decimal
    # entries is -0.03127870. The value here is -0.03127874, so that print is 4 units off
    # whether it came from print(a) or from repr(a).
    text = """title = "numpy"
[tensors]
x = ["0.12345678", "-0.03127874"]
[steps]
y = "x * 1"
[[claims]]
label = "print"
step = "y"
printed = "[ 0.12345678 -0.0312787 ]"
[[claims]]
label = "repr"
step = "y"
printed = "array([ 0.12345678, -0.0312787 ])"
"""
    checks = _checks(text)
    assert [c.verdict for c in checks] == ["exact", "wrong", "exact", "wrong"]


# ----------------------------------------------------------------------------- scalars and indices


def test_a_given_scalar_written_as_a_string_is_zero_dimensional() -> None:
    text = """title = "scalars"
[tensors]
a = "1.2"
b = 0.5
[steps]
v = "stack([a, b])"
[[claims]]
label = "v"
step = "v"
printed = "1.2 0.5"
"""
    assert [c.verdict for c in _checks(text)] == ["exact", "exact"]


def test_stands_for_names_a_scalar_step_and_a_vector() -> None:
    text = """title = "stands for"
[tensors]
cos01 = "0.99500417"
h = ["0.12", "0.97", "-0.31"]
[steps]
twice = "cos01 * 2"
[[claims]]
label = "line"
expression = "0.995 × 2"
stands_for = { "0.995" = "cos01" }
printed = "1.990"
[[claims]]
label = "vector line"
expression = "[0.1, 1.0, -0.3] × 2"
stands_for = { "[0.1, 1.0, -0.3]" = "h" }
printed = "[0.24, 1.94, -0.62]"
"""
    checks = _checks(text)
    assert [c.verdict for c in checks] == ["rounded", "exact", "exact", "exact"]
    assert checks[0].extra["exact_reading"]["stands_for"] == {"0.995": "cos01"}


def test_an_expression_indexes_a_vector_step() -> None:
    text = """title = "index"
[tensors]
spec = ["0.5", "0.25", "0.125", "2", "4"]
[[claims]]
label = "entry"
expression = "spec[1] * 4"
printed = "1"
"""
    (c,) = _checks(text)
    assert c.verdict == "exact"
    bad = text.replace("spec[1]", "spec[5]")
    with pytest.raises(SpecError, match=r"spec\[5\] is outside its shape \(5,\)"):
        check(spec.loads(bad))


def test_json_reports_the_entries_of_vector_and_scalar_steps(tmp_path: Path) -> None:
    text = """title = "indices"
[tensors]
v = ["0.5", "0.25"]
s = "3"
[[claims]]
label = "v"
step = "v"
printed = "0.5 0.25"
[[claims]]
label = "s"
step = "s"
printed = "3"
"""
    r = _run(tmp_path, text, "--format", "json")
    assert r.returncode == 0, r.stderr
    checks = json.loads(r.stdout)["derivations"][0]["checks"]
    # index keeps the contract's [0, k] and [0, 0]; entry gives the step's own indices
    assert [c["index"] for c in checks] == [[0, 0], [0, 1], [0, 0]]
    assert [c["entry"] for c in checks] == [[0], [1], []]


def test_displayed_arithmetic_alone_needs_no_model() -> None:
    text = """title = "a worked line"
[[claims]]
label = "exp"
expression = "e^0.5"
printed = "1.649"
"""
    (c,) = _checks(text)
    assert c.verdict == "rounded"


def test_computed_in_on_a_displayed_line() -> None:
    # Python's math.exp(0.1) prints 1.1051709180756477; the exact value rounds to …476
    text = """title = "a float line"
[[claims]]
label = "float64"
expression = "exp(0.1)"
computed_in = "float64"
printed = "1.1051709180756477"
[[claims]]
label = "strict"
expression = "exp(0.1)"
printed = "1.1051709180756477"
"""
    checks = _checks(text)
    assert [c.verdict for c in checks] == ["rounded", "slip"]
    assert checks[0].extra["accepted_by"] == "computed_in"


def test_an_unknown_rounded_input_is_an_error_with_a_suggestion() -> None:
    text = """title = "t"
rounded_inputs = ["Xx"]
[tensors]
X = ["0.12", "0.5"]
[[claims]]
label = "X"
step = "X"
printed = "0.12 0.5"
"""
    with pytest.raises(SpecError, match=r"rounded_inputs: .*found 'Xx'; did you mean X\?"):
        spec.loads(text)


def test_a_given_tensor_named_in_rounded_inputs_is_rounded() -> None:
    # 0.13 and 0.25 stand for anything in [0.125, 0.135] and [0.245, 0.255]: the softmax's
    # first entry 1/(1 + e^(b − a)) then ranges over [1/(1 + e^0.13), 1/(1 + e^0.11)] =
    # [0.46755, 0.47253]; 0.472 is in it, though the exact 1/(1 + e^0.12) = 0.47004 prints 0.470
    text = """title = "t"
rounded_inputs = ["M"]
[tensors]
M = ["0.13", "0.25", "-inf"]
[steps]
p = "softmax(M)"
[[claims]]
label = "p"
step = "p"
printed = "0.472 0.528 0"
"""
    checks = _checks(text)
    assert [c.verdict for c in checks] == ["rounded", "rounded", "exact"]
    assert checks[0].extra["accepted_by"] == "rounded_inputs"


def test_minus_infinity_in_a_rounded_tensor() -> None:
    text = """title = "t"
[tensors]
M = { values = ["0.13", "0.25", "-inf"], rounded = true }
[steps]
p = "softmax(M)"
[[claims]]
label = "p"
step = "p"
printed = "0.472 0.528 0"
"""
    assert [c.verdict for c in _checks(text)] == ["rounded", "rounded", "exact"]


def test_a_word_claimed_on_user_steps() -> None:
    text = """title = "argmax"
vocab = ["dog", "cat", "fish"]
[tensors]
logits = ["0.5", "2.25", "-1.0"]
[steps]
p = "softmax(logits)"
best = "argmax(logits)"
[[claims]]
label = "top word"
step = "p"
rank = 1
printed = "cat"
[[claims]]
label = "argmax word"
step = "best"
printed = "cat"
[[claims]]
label = "wrong word"
step = "best"
printed = "dog"
"""
    assert [c.verdict for c in _checks(text)] == ["exact", "exact", "wrong"]


def test_a_transposed_weight_is_named_as_the_transpose() -> None:
    text = """title = "t"
[model]
d_model = 2
n_heads = 2
d_head = 2
vocab = ["a", "b"]
embed = "identity"
[[model.layers]]
W_O = \"\"\"
1 0 0 1
0 1 1 0
\"\"\"
[[model.layers.heads]]
W_Q = "identity"
W_K = "identity"
W_V = "identity"
[[model.layers.heads]]
W_Q = "identity"
W_K = "identity"
W_V = "identity"
[input]
tokens = ["a"]
[[claims]]
label = "x"
step = "x"
printed = "1 0"
"""
    with pytest.raises(
        SpecError, match=r"W_O: expected a 4x2 matrix, found 2x4; this is the transpose"
    ):
        spec.loads(text)


def test_explain_keeps_the_exponent_of_a_tiny_entry(tmp_path: Path) -> None:
    import mpmath

    with mpmath.workdps(30):
        tiny = mpmath.exp(-(10**9)) / (mpmath.exp(-(10**9)) + 1 + mpmath.exp(0.5))
        exponent = int(mpmath.floor(mpmath.log10(tiny)))
        mantissa = str(mpmath.floor(tiny / mpmath.mpf(10) ** exponent * 10**4) / 10**4)[:6]
    text = """title = "tiny"
[tensors]
x = ["-1e9", "0", "0.5"]
[steps]
p = "softmax(x)"
[[claims]]
label = "p"
step = "p"
printed = "0.000 0.378 0.622"
"""
    f = tmp_path / "tiny.toml"
    f.write_text(text)
    r = subprocess.run(
        [sys.executable, "-m", "symtf", "explain", str(f), "p"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if line.strip().startswith("= [")]
    assert f"[{mantissa}…×10^({exponent})" in rows[-1], rows  # p's row, after x's
