"""Line numbers of claims and keys, counted by hand in small TOML texts."""

from __future__ import annotations

from pathlib import Path

import pytest
from tiny_derivations import tiny_model

import symtf
from symtf.errors import SpecError, SymtfError
from symtf.spec.toml_lines import line_of, locate

NESTED = '''title = "t"
note = """
[[claims]]
not a header
"""
[model]
W = [
  [1],
  [2],
]
"quoted key" = 1
[[model.layers]]
W1 = 1
[[model.layers.heads]]
W_Q = 'a # not a comment'
[[model.layers.heads]]
W_Q = 2
[[model.layers]]
[[model.layers.heads]]
W_Q = 3  # a comment
[[claims]]
label = "a"
[[claims]]   # second
label = "b"
printed = """
1 2
"""
step = "x"
'''


def test_locate_follows_nested_arrays_of_tables_and_skips_strings_and_arrays() -> None:
    lines = locate(NESTED)
    assert lines["title"] == 1
    assert lines["note"] == 2
    assert lines["model"] == 6
    assert lines["model.W"] == 7
    assert "model.1" not in lines and "model.2" not in lines  # rows of a multi-line array
    assert lines["model.quoted key"] == 11
    assert lines["model.layers[0]"] == 12
    assert lines["model.layers[0].W1"] == 13
    assert lines["model.layers[0].heads[0].W_Q"] == 15
    assert lines["model.layers[0].heads[1].W_Q"] == 17
    assert lines["model.layers[1].heads[0]"] == 19
    assert lines["model.layers[1].heads[0].W_Q"] == 20
    assert lines["claims[0]"] == 21  # the header inside the string on line 3 is not counted
    assert lines["claims[1]"] == 23
    assert lines["claims[1].printed"] == 25
    assert lines["claims[1].step"] == 28
    assert "claims[2]" not in lines


def test_line_of_falls_back_to_the_enclosing_place() -> None:
    lines = locate(NESTED)
    assert line_of(lines, "claims[1].printed[0][1]") == 25
    assert line_of(lines, "claims[1].decimals") == 23
    assert line_of(lines, "model.layers[1].heads[0].W_K") == 19
    assert line_of(lines, "input.tokens") is None
    assert line_of(lines, "not a key: at all") is None


def test_inline_claims_get_the_line_of_their_array() -> None:
    text = 'title = "t"\nclaims = [\n  {label = "a"},\n  {label = "b"},\n]\n'
    lines = locate(text)
    assert "claims[0]" not in lines
    assert line_of(lines, "claims[1].label") == 2


# tiny_model writes one key a line: title, [model], 3 keys, 2 headers, 3 weights, [input],
# tokens; the first [[claims]] header is line 13.
TINY = (
    tiny_model(tokens=["a"])
    + """[[claims]]
label = "X"
step = "x"
printed = "1 0"
[[claims]]
label = "Y"
step = "x"
printed = "1 0"
"""
)


def test_loaded_claims_know_their_header_line() -> None:
    d = symtf.loads(TINY, "tiny.toml")
    assert [c.line for c in d.claims] == [13, 17]


@pytest.mark.parametrize(
    ("old", "new", "key", "line"),
    [
        (
            'printed = "1 0"\n[[claims]]',
            'printed = "1 0"\nrow = -1\n[[claims]]',
            "claims[0].row",
            17,
        ),
        ('W_K = "identity"', 'W_K = "1 2 3"', "model.layers[0].heads[0].W_K", 9),
        ('label = "Y"\n', "", "claims[1].label", 17),
    ],
)
def test_spec_errors_name_the_line(old: str, new: str, key: str, line: int) -> None:
    text = TINY.replace(old, new, 1)
    with pytest.raises(SpecError) as e:
        symtf.loads(text, "tiny.toml")
    msg = str(e.value)
    assert msg.startswith("tiny.toml: ") and key in msg, msg
    assert msg.endswith(f"(line {line})"), msg


def test_the_line_ends_the_first_line_of_a_multi_line_message(tmp_path: Path) -> None:
    from symtf.commands.check import check_file

    path = tmp_path / "tiny.toml"
    # An expression naming a later displayed line fails when checked, with a caret diagram.
    path.write_text(TINY + '[[claims]]\nlabel = "Z"\nexpression = "B + 1"\nprinted = "1"\n')
    with pytest.raises(SymtfError) as e:
        check_file(path)
    first, _, rest = str(e.value).partition("\n")
    assert first.startswith(f"{path}: claims[2].expression") and first.endswith("(line 23)")
    assert "^" in rest and "(line" not in rest
