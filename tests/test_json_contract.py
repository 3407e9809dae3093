"""The JSON contract, field by field: every field written is declared, every decimal parses.

The shipped schema stays open (a later version may add fields, and a reader of
version 1 must accept them). Here it is closed: every object of the schema gets
``additionalProperties: false``, so a field the code writes but the schema does
not declare fails. Every field the schema declares a decimal must parse with
:class:`decimal.Decimal`, in the report of every bundled derivation and of
small files made to reach the fields the bundled ones never write (a symbol's
solution set, float32 enclosures, percentages, fractions, infinities).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from symtf import bundled
from symtf.checking.diagnose import CAUSES
from symtf.checking.evaluation import DECIDED_BY
from symtf.checking.report import Report
from symtf.commands.check import check_file
from symtf.commands.draft import check_article
from symtf.renderers import json as render_json

DECIMAL_REFS = {"#/$defs/decimal", "#/$defs/optional_decimal", "#/$defs/exact"}

SYMBOL = """title = "one weight as a symbol"
[tensors]
w = "w"
[steps]
y = "2 * w + 0.1"
[[claims]]
label = "y"
step = "y"
printed = "0.5"
"""

#: A declared symbol: 2w + 0.1 prints as 0.5 for 2w + 0.1 in [0.45, 0.55], w in [0.175, 0.225]
#: (by hand), inside the declared range; the declared value 0.2 lies in that set.
DECLARED = """title = "a declared symbol with a range and the article's value"
[symbols]
w = { range = [0, 1], value = 0.2 }
[tensors]
w = "w"
[steps]
y = "2 * w + 0.1"
[[claims]]
label = "y"
step = "y"
printed = "0.5"
"""

#: Two declared symbols: x·u + 0.1 prints as 0.5 for x·u in [0.35, 0.45] (by hand), so for
#: w in [0.175, 0.225] with v held at 2 and v in [1.75, 2.25] with w held at 0.2; e^(x·u)
#: is not rational in either, so its sets are searched.
TWO = """title = "two declared symbols"
[symbols]
w = { range = [0, 1], value = 0.2 }
v = { range = [0, 4], value = 2 }
[tensors]
x = "w"
u = "v"
[steps]
y = "x * u + 0.1"
z = "exp(x * u)"
[[claims]]
label = "y"
step = "y"
printed = "0.5"
[[claims]]
label = "z"
step = "z"
printed = "1.5"
"""

FLOAT32 = """title = "a float32 softmax"
computed_in = "float32"
[model]
architecture = "none"
[[model.standalone]]
name = "sm"
op = "softmax"
input = "0.1 0.2 0.3"
[[claims]]
label = "P"
step = "sm"
printed = "0.30060959 0.33222081 0.36716959"
"""

NOTATIONS = """title = "numbers in every notation"
[tensors]
x = "1 -2 0.5 5"
M = "0 -inf"
[steps]
third = "x / 3"
[[claims]]
label = "fractions"
step = "third"
printed = "1/3 -2/3 1/6 5/3"
[[claims]]
label = "percent and scientific"
step = "x"
printed = "100.0% -2.000e+00 5.0e-01 5"
[[claims]]
label = "masked"
step = "M"
printed = "0 −∞"
[[claims]]
label = "off"
step = "third"
printed = "0.334 -0.667 0.166 1.667"
"""


def closed(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with ``additionalProperties: false`` on every object that lists properties."""
    out = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "properties" in node and "additionalProperties" not in node:
                node["additionalProperties"] = False
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(out)
    return out


def decimal_paths(schema: dict[str, Any]) -> set[tuple[str, ...]]:
    """Paths (object keys, ``*`` for array items) of every field the schema calls a decimal."""
    found: set[tuple[str, ...]] = set()

    def walk(node: Any, path: tuple[str, ...], depth: int) -> None:
        if depth > 12 or not isinstance(node, dict):
            return
        ref = node.get("$ref")
        if ref in DECIMAL_REFS:
            found.add(path)
            return
        if ref:  # a JSON pointer into the schema: #/$defs/NAME[/properties/FIELD…]
            target: Any = schema
            for part in ref.removeprefix("#/").split("/"):
                target = target[part]
            walk(target, path, depth + 1)
        for key in ("oneOf", "anyOf", "allOf"):
            for sub in node.get(key, []):
                walk(sub, path, depth + 1)
        for name, sub in node.get("properties", {}).items():
            walk(sub, (*path, name), depth + 1)
        if isinstance(node.get("items"), dict):
            walk(node["items"], (*path, "*"), depth + 1)

    walk(schema, (), 0)
    return found


def values_at(data: Any, path: tuple[str, ...]) -> Iterator[Any]:
    """Every value in ``data`` at ``path`` (``*`` walks an array)."""
    if not path:
        yield data
        return
    head, rest = path[0], path[1:]
    if head == "*" and isinstance(data, list):
        for item in data:
            yield from values_at(item, rest)
    elif isinstance(data, dict) and head in data:
        yield from values_at(data[head], rest)


#: An article checked as it stands, whose lines carry forward a miscopied e^0.4 (1.4918…
#: printed 1.429): their root names the article line (``source_line``).
ARTICLE = """# A softmax by hand

```
e^{1.2} = 3.320
e^{0.4} = 1.429
3.320 + 1.429 = 4.749
3.320 / 4.749 = 0.699
```
"""


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """JSON reports: every bundled derivation, and the files above."""
    folder = tmp_path_factory.mktemp("contract")
    paths = list(bundled.paths())
    for name, text in (
        ("symbol", SYMBOL),
        ("declared", DECLARED),
        ("two", TWO),
        ("float32", FLOAT32),
        ("notations", NOTATIONS),
    ):
        (folder / f"{name}.toml").write_text(text, encoding="utf-8")
        paths.append(folder / f"{name}.toml")
    (folder / "article.md").write_text(ARTICLE, encoding="utf-8")
    checked = [check_file(p, timeout=None) for p in paths]  # no wall-clock budget
    report = Report((*checked, check_article(folder / "article.md")))
    data = json.loads(render_json.render(report))
    return {Path(d["path"]).stem: d for d in data["derivations"]}


def all_checks(reports: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for d in reports.values() for c in d["checks"]]


def test_the_small_files_reach_the_rare_fields(reports: dict[str, dict[str, Any]]) -> None:
    fields = {f for c in all_checks(reports) for f in c}
    rare = {"solutions", "symbolic_value", "enclosure", "accepted_by", "simulated", "root"}
    assert rare <= fields, rare - fields
    roots = [c["root"] for c in reports["article"]["checks"] if c.get("cause") == "inherited"]
    assert roots and all(r["source_line"] == 5 for r in roots), roots
    assert any(c["printed_value_truncated"] for c in reports["notations"]["checks"])
    (declared,) = reports["declared"]["checks"]
    assert declared["declared_value"] == {"symbol": "w", "value": "0.2", "inside": True}
    assert declared["solutions_range"] == ["0", "1"]
    assert [(s["lo"], s["hi"]) for s in declared["solutions"]] == [("0.175", "0.225")]
    y, z = reports["two"]["checks"]
    held = {h["symbol"]: h for h in y["held_solutions"]}
    assert [(s["lo"], s["hi"]) for s in held["w"]["solutions"]] == [("0.175", "0.225")]
    assert [(s["lo"], s["hi"]) for s in held["v"]["solutions"]] == [("1.75", "2.25")]
    assert held["w"]["held"] == {"v": "2"} and held["w"]["declared_value"]["inside"] is True
    assert {h["symbol"] for h in z["held_solutions"]} == {"v", "w"}
    assert all(h["solutions_range"] and h["solutions"] for h in z["held_solutions"])


def test_every_written_field_is_declared(reports: dict[str, dict[str, Any]]) -> None:
    validator = jsonschema.Draft202012Validator(closed(render_json.schema()))
    for stem, d in reports.items():
        whole = {"symtf": "0", "contract": 1, "derivations": [d], "errors": []}
        errors = [e.message for e in validator.iter_errors(whole)]
        assert not errors, (stem, errors[:3])


def test_the_closed_schema_refuses_an_undeclared_field(reports: dict[str, dict[str, Any]]) -> None:
    d = copy.deepcopy(reports["i_love_ai"])
    d["checks"][0]["units_of"] = "0"
    whole = {"symtf": "0", "contract": 1, "derivations": [d], "errors": []}
    assert not jsonschema.Draft202012Validator(closed(render_json.schema())).is_valid(whole)


def test_every_decimal_field_parses(reports: dict[str, dict[str, Any]]) -> None:
    paths = decimal_paths(render_json.schema())
    expected = {"exact", "printed_value", "expected_value", "units_off", "simulated"}
    assert {p[-1] for p in paths if len(p) == 5} >= expected
    seen: dict[tuple[str, ...], int] = {}
    for path in paths:
        for value in values_at({"derivations": list(reports.values())}, path):
            if value is None:
                continue
            assert isinstance(value, str) and "…" not in value, (path, value)
            Decimal(value)  # raises on anything that is not a decimal
            seen[path] = seen.get(path, 0) + 1
    for name in ("exact", "printed_value", "expected_value", "units_off"):
        assert seen[("derivations", "*", "checks", "*", name)] > 1000, name
    assert seen[("derivations", "*", "checks", "*", "solutions", "*", "lo")] >= 1


def test_units_off_is_a_decimal_of_the_distance(reports: dict[str, dict[str, Any]]) -> None:
    # (printed − exact)/u from the fields themselves: within a unit of the truncation.
    n = 0
    for c in reports["i_love_ai"]["checks"]:
        if c["kind"] != "number" or c["exact"] in (None, "-inf") or "/" in c["printed"]:
            continue
        printed = Decimal(c["printed_value"])
        ulp = Decimal(1).scaleb(printed.as_tuple().exponent)
        units = (printed - Decimal(c["exact"])) / ulp
        slack = Decimal("1e-6") + (Decimal(1).scaleb(Decimal(c["exact"]).as_tuple().exponent) / ulp)
        assert abs(units - Decimal(c["units_off"])) <= slack, c
        n += 1
    assert n > 400


def test_printed_values_are_the_prints_read_independently(
    reports: dict[str, dict[str, Any]],
) -> None:
    by_label = {}
    for c in reports["notations"]["checks"]:
        by_label.setdefault(c["claim"], []).append(c)
    fractions = by_label["fractions"]
    assert [c["printed"] for c in fractions] == ["1/3", "-2/3", "1/6", "5/3"]
    for c in fractions:
        value = Fraction(c["printed"])
        assert c["printed_value_truncated"] is True
        assert abs(Fraction(Decimal(c["printed_value"])) - value) < Fraction(1, 10**18)
        assert c["verdict"] == "exact" and c["expected"] == c["printed"]
    mixed = by_label["percent and scientific"]
    assert [c["printed_value"] for c in mixed] == ["1.000", "-2.000e0", "5.0e-1", "5"]
    assert [c["printed_value_truncated"] for c in mixed] == [False] * 4
    masked = by_label["masked"]
    assert [c["printed_value"] for c in masked] == ["0", "-inf"]
    off = {tuple(c["index"]): c for c in by_label["off"]}
    assert off[(0, 0)]["expected"] == "0.333" and off[(0, 0)]["expected_value"] == "0.333"


def test_the_enums_are_the_codes(reports: dict[str, dict[str, Any]]) -> None:
    props = render_json.schema()["$defs"]["check"]["properties"]
    assert props["decided_by"]["enum"] == list(DECIDED_BY)
    assert [c for c in props["cause"]["enum"] if c is not None] == list(CAUSES)
    assert {c.get("decided_by") for c in all_checks(reports)} - {None} <= set(DECIDED_BY)


#: A 1-D step (a TOML array), a scalar step (one number), a matrix and a 4-D tensor.
SHAPES = """title = "one claim of each shape"
[tensors]
v = ["0.5", "0.25", "0.125"]
s = "3"
M = "1 2\\n3 4"
T = { shape = [1, 2, 1, 2], values = "1 2 3 4" }
[[claims]]
label = "vector"
step = "v"
printed = "0.5 0.25 0.125"
[[claims]]
label = "scalar"
step = "s"
printed = "3"
[[claims]]
label = "matrix"
step = "M"
row = 1
printed = "3 4"
[[claims]]
label = "4-D"
step = "T"
printed = "[[[[1, 2]], [[3, 4]]]]"
"""


def test_index_keeps_its_v1_shapes_and_entry_gives_the_steps_own(tmp_path: Path) -> None:
    # Contract 1, as 0.1.0 wrote it: a 1-D step is held as one row, so its entry k is
    # [0, k] and a scalar's is [0, 0]. A consumer keyed on those shapes keeps working;
    # `entry` (an added field) gives the indices in the step's own shape.
    f = tmp_path / "shapes.toml"
    f.write_text(SHAPES, encoding="utf-8")
    report = render_json.report_dict(Report((check_file(f),)))
    assert report["contract"] == 1
    got = [(c["claim"], c["index"], c["entry"]) for c in report["derivations"][0]["checks"]]
    assert got == [
        ("vector", [0, 0], [0]),
        ("vector", [0, 1], [1]),
        ("vector", [0, 2], [2]),
        ("scalar", [0, 0], []),
        ("matrix", [1, 0], [1, 0]),
        ("matrix", [1, 1], [1, 1]),
        ("4-D", [0, 0, 0, 0], [0, 0, 0, 0]),
        ("4-D", [0, 0, 0, 1], [0, 0, 0, 1]),
        ("4-D", [0, 1, 0, 0], [0, 1, 0, 0]),
        ("4-D", [0, 1, 0, 1], [0, 1, 0, 1]),
    ]
    assert all(c["verdict"] == "exact" for c in report["derivations"][0]["checks"])
    jsonschema.validate(report, render_json.schema())
