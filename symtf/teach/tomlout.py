"""A small TOML writer for the data symtf writes (derivations, keys, answer templates).

Only what those files hold: tables, arrays of tables, strings, integers,
booleans and arrays of them. A float that came from :func:`tomllib.loads` with
:func:`symtf.numbers.toml_float` is written as the text it was read from, so a
number is never routed through binary floating point.
"""

from __future__ import annotations

import re
from typing import Any

from symtf.numbers import TomlFloat
from symtf.visible import toml_block, toml_string

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE.match(k) else toml_string(k)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, TomlFloat):
        return v.text
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        raise TypeError("a binary float has no place in symtf's files; write it as a string")
    if isinstance(v, str):
        return toml_block(v) if "\n" in v else toml_string(v)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def _is_table_array(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def _table(data: dict[str, Any], path: list[str], out: list[str]) -> None:
    for k, v in data.items():
        if not isinstance(v, dict) and not _is_table_array(v):
            out.append(f"{_key(k)} = {_value(v)}")
    for k, v in data.items():
        if isinstance(v, dict):
            if all(not isinstance(x, (dict, list)) for x in v.values()) and not v:
                out.append(f"{_key(k)} = {{}}")
                continue
            sub = [*path, _key(k)]
            out.append("")
            out.append(f"[{'.'.join(sub)}]")
            _table(v, sub, out)
        elif _is_table_array(v):
            sub = [*path, _key(k)]
            for item in v:
                out.append("")
                out.append(f"[[{'.'.join(sub)}]]")
                _table(item, sub, out)


def dumps(data: dict[str, Any]) -> str:
    """TOML text for ``data``."""
    out: list[str] = []
    _table(data, [], out)
    return "\n".join(out).lstrip("\n") + "\n"


__all__ = ["dumps"]
