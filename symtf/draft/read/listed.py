"""A bracketed list written again in the next link of a chain, entry by entry.

``[exp(5-9), exp(9-9)] / 1.156 = [0.018, 1.000] / 1.156``: the two links are the same
but for their lists, which have as many entries, so the later list's 0.018 is the value
of the earlier one's ``exp(5-9)``. An entry written again as arithmetic of its own
(``[exp(5-9)/1.018, …] = [0.018/1.018, …]``) lines up term by term, as the links of a
chain do (:func:`symtf.draft.read.links.term_links`). A last link that is a list of bare
numbers is the chain's printed result, checked as such, not as the values of entries.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from symtf.draft.read.items import is_arithmetic, link_plain, numeric_cell
from symtf.draft.read.links import term_links

#: ``(later link, terms, number, numbers before it)``, as :func:`term_links` gives them.
Link = tuple[int, tuple[str, ...], str, list[str]]

#: The unsigned numbers written in a piece of a link, in order (to place a later one).
_NUMBERS = re.compile(r"(?<![\w.])(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")


def chain_links(links: Sequence[str]) -> list[Link]:
    """The intermediate numbers of a chain: :func:`term_links`' and those of each list
    written again in the next link (:func:`entry_links`)."""
    plains = [link_plain(link) for link in links]  # each link read once, for each kind
    out = term_links(links, plains)
    for k in range(1, len(links)):
        a, b = plains[k - 1], plains[k]
        if a is None or b is None:
            continue
        out.extend(_entry_links(k, a, b, last=k == len(links) - 1))
        if not _list_terms(k, a, b):  # else each list is checked whole (list_terms)
            out.extend(_scaled_links(k, a, b))
        out.extend(_entrywise_links(k, a, b))
        if not any(link[0] == k for link in out):
            out.extend(grouped_links(k, a, b))
    return out


#: One atom of a plain link: a bracketed group, an unsigned number, a word or a sign.
_ATOM = re.compile(
    r"\s*(?:(?P<n>(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)|(?P<w>[A-Za-z_]+)|(?P<c>\S))"
)
_CLOSE = {"(": ")", "[": "]", "{": "}"}


def _atoms(plain: str) -> list[tuple[str, str, int]] | None:
    """A plain link as ``(kind, text, start)`` atoms at its top level: ``g`` a bracketed
    group (its text with the brackets), ``n`` a number, ``w`` a word, ``c`` any other
    sign; None when its brackets do not pair."""
    out: list[tuple[str, str, int]] = []
    at = 0
    while at < len(plain):
        m = _ATOM.match(plain, at)
        if m is None:
            break
        start = m.start(m.lastgroup or "c")
        if m.group("c") in _CLOSE:
            depth, end = 0, start
            while end < len(plain):
                depth += plain[end] in "([{"
                depth -= plain[end] in ")]}"
                if depth == 0:
                    break
                end += 1
            if depth != 0 or plain[end] != _CLOSE[plain[start]]:
                return None
            out.append(("g", plain[start : end + 1], start))
            at = end + 1
            continue
        if m.group("c") in (")", "]", "}"):
            return None
        out.append((m.lastgroup or "c", m.group(m.lastgroup or "c"), start))
        at = m.end()
    return out


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def grouped_links(k: int, earlier: str, later: str) -> list[Link]:
    """``(1 - 3.5)^2 = (-2.5)^2``, ``-[-0.347 + (-0.347)] = -[-0.694]``,
    ``\\frac{2.0 - 3.0}{0.707} = \\frac{-1.0}{0.707}``: the two links are written alike
    but for bracketed groups of the earlier one that the later one writes as one number
    each, so that number is the value of the group's arithmetic.

    A bracketed group is one operand whatever surrounds it, so its value is what the
    number stands for. The links must agree atom for atom elsewhere (groups that differ
    are lined up within, the same way); otherwise nothing is read. Groups with commas
    (lists, arguments) are left to :func:`entry_links`.
    """
    found: list[tuple[str, str, int]] = []
    if not _aligned_groups(earlier, later, 0, found) or not found:
        return []
    return [(k, (written,), number, _NUMBERS.findall(later[:at])) for written, number, at in found]


def _aligned_groups(a: str, b: str, offset: int, found: list[tuple[str, str, int]]) -> bool:
    """For :func:`grouped_links`: line ``a`` and ``b`` up atom by atom (``b`` starts at
    ``offset`` of the later link), adding each group of ``a`` written as a number in ``b``
    (its text, the number, where the number stands); False when they do not line up."""
    xs, ys = _atoms(a), _atoms(b)
    if xs is None or ys is None:
        return False
    i = j = 0
    replaced: list[int] = []  # the atoms of ``a`` written as one number each in ``b``
    while i < len(xs) and j < len(ys):
        (kx, tx, _), (ky, ty, sy) = xs[i], ys[j]
        if kx == ky and _squeezed(tx) == _squeezed(ty):
            i, j = i + 1, j + 1
            continue
        if kx != "g" or "," in tx:
            return False
        inner = tx[1:-1]
        signed = ky == "c" and ty in "-−" and j + 1 < len(ys) and ys[j + 1][0] == "n"
        if signed and (j == 0 or ys[j - 1][0] == "c") and tx[0] == "(":
            number, at, j = numeric_cell(ty + ys[j + 1][1]), sy, j + 2
        elif ky == "n" and tx[0] == "(":
            number, at, j = numeric_cell(ty), sy, j + 1
        elif ky == "g" and ty[0] == tx[0] and "," not in ty:
            number, at = numeric_cell(ty[1:-1]), sy + 1 + len(ty[1:-1]) - len(ty[1:-1].lstrip())
            if number is None and not _aligned_groups(inner, ty[1:-1], offset + sy + 1, found):
                return False
            j += 1
        else:
            return False
        if number is not None:
            if numeric_cell(inner) is not None or not is_arithmetic(inner):
                return False
            if i >= 2 and i - 2 in replaced and xs[i - 1][1] in "/÷":
                # "(2/6)/(3/6) = (2)/(3)": a fraction reduced, not its parts worked out
                return False
            replaced.append(i)
            found.append((inner.strip(), number, offset + at))
        i += 1
    return i == len(xs) and j == len(ys)


#: A number times a list, or a list times a number, in a plain link: ``0.4·[1,0.5]``.
_SCALED = re.compile(
    r"^(?:(?P<a>\d+\.?\d*|\.\d+)[·×*](?P<l>\[[^\[\]]*\])|(?P<r>\[[^\[\]]*\])[·×*](?P<b>\d+\.?\d*|\.\d+))$"
)


def scaled_links(k: int, earlier: str, later: str) -> list[Link]:
    """``0.4·[1,0] + 0.2·[0.5,0.5] = [0.4, 0] + [0.1, 0.1]``: the later link's lists, term
    by term, write the products of the earlier link's scaled lists, entry by entry.

    Both links must be sums of as many terms, each earlier term a number times a list and
    each later one a list of as many numbers.
    """
    a, b = link_plain(earlier), link_plain(later)
    if a is None or b is None:
        return []
    return _scaled_links(k, a, b)


def _scaled_links(k: int, a: str, b: str) -> list[Link]:
    """:func:`scaled_links` of two links read as plain text."""
    ta, tb = _top_terms(a), _top_terms(b)
    if len(ta) < 2 or len(ta) != len(tb):
        return []
    out: list[Link] = []
    seen: list[str] = []
    for x, (y, _) in zip(ta, tb, strict=True):
        m = _SCALED.match(x[0])
        xs = _entries(m.group("l") or m.group("r")) if m else None
        ys = _entries(y) if y.startswith("[") and y.endswith("]") else None
        if m is None or xs is None or ys is None or len(xs) != len(ys):
            return []
        numbers = [numeric_cell(v) for v in ys]
        if any(n is None for n in numbers):
            return []
        scale = m.group("a") or m.group("b")
        for entry, number in zip(xs, numbers, strict=True):
            if not re.fullmatch(r"[01](?:\.0*)?", entry):  # c·1 and c·0 only copy c or 0
                out.append((k, (f"{scale}·{entry}",), str(number), seen[:]))
            seen.append(str(number))
    return out


def _entrywise_links(k: int, a: str, b: str) -> list[Link]:
    """``0.4·[0, 2] + 0.2·[1, 1] = [0 + 0.2, 0.8 + 0.2]``: the later link writes each entry
    of the sum as the sum of the terms' entries at that place, so each of its numbers is
    the product of a term's scale and its entry (``0.4·2`` for the 0.8, ``0.2·1`` for the
    0.2: every number the link writes is checked, the copies too)."""
    scaled: list[tuple[str, list[str]]] = []
    for x, _ in _top_terms(a):
        m = _SCALED.match(x)
        xs = _entries(m.group("l") or m.group("r")) if m else None
        if m is None or xs is None:
            return []
        scaled.append((m.group("a") or m.group("b"), xs))
    widths = {len(xs) for _, xs in scaled}
    later = b.strip()
    ys = _entries(later) if later.startswith("[") and later.endswith("]") else None
    if len(scaled) < 2 or len(widths) != 1 or ys is None or len(ys) != widths.pop():
        return []
    out: list[Link] = []
    seen: list[str] = []
    for i, y in enumerate(ys):
        numbers = [numeric_cell(t) for t, _ in _top_terms(y)]
        if len(numbers) != len(scaled) or any(n is None for n in numbers):
            return []
        for (scale, xs), number in zip(scaled, numbers, strict=True):
            out.append((k, (f"{scale}·{xs[i]}",), str(number), seen[:]))
            seen.append(str(number))
    return out


def list_terms(links: Sequence[str]) -> list[tuple[int, int, str]]:
    """``0.4·[0, 2] + 0.2·[1, 1] = [0, 0.8] + [0.2, 0.2]``: each list of the later link is
    the value of the scaled list at its place in the link before it, a vector term worked
    out, checked whole (every entry, the ones that only copy too).

    Returns ``(later link, place of the list among its top-level terms, earlier term)``.
    """
    plains = [link_plain(link) for link in links]
    out: list[tuple[int, int, str]] = []
    for k in range(1, len(links)):
        a, b = plains[k - 1], plains[k]
        if a is not None and b is not None:
            out.extend(_list_terms(k, a, b))
    return out


def _list_terms(k: int, a: str, b: str) -> list[tuple[int, int, str]]:
    """:func:`list_terms` of two links read as plain text."""
    ta, tb = _top_terms(a), _top_terms(b)
    if len(ta) < 2 or len(ta) != len(tb):
        return []
    out: list[tuple[int, int, str]] = []
    for j, ((x, _), (y, _)) in enumerate(zip(ta, tb, strict=True)):
        m = _SCALED.match(x)
        xs = _entries(m.group("l") or m.group("r")) if m else None
        ys = _entries(y) if y.startswith("[") and y.endswith("]") else None
        if xs is None or ys is None or len(xs) != len(ys):
            return []
        if any(numeric_cell(v) is None for v in ys):
            return []
        out.append((k, j, x))
    return out


def _top_terms(plain: str) -> list[tuple[str, int]]:
    """A plain link split at its top-level ``+`` signs: each term, and where it starts."""
    terms: list[tuple[str, int]] = []
    depth = start = 0
    for i, ch in enumerate(plain):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "+" and depth == 0 and i > start:
            terms.append((plain[start:i].strip(), start))
            start = i + 1
    terms.append((plain[start:].strip(), start))
    return terms


def entry_links(k: int, earlier: str, later: str, *, last: bool = False) -> list[Link]:
    """The numbers of link ``k``'s lists that write the values of link ``k - 1``'s entries.

    The links must be alike once each top-level list is left out (``[…] / 1.156`` and
    ``[…] / 1.156``), with lists of as many entries at the same places.
    """
    a, b = link_plain(earlier), link_plain(later)
    if a is None or b is None:
        return []
    return _entry_links(k, a, b, last=last)


def _entry_links(k: int, a: str, b: str, *, last: bool) -> list[Link]:
    """:func:`entry_links` of two links read as plain text."""
    la, lb = _lists(a), _lists(b)
    if not la or len(la) != len(lb) or _skeleton(a, la) != _skeleton(b, lb):
        return []
    out: list[Link] = []
    for (sa, ea), (sb, eb) in zip(la, lb, strict=True):
        xs, ys = _entries(a[sa:ea]), _entries(b[sb:eb])
        if xs is None or ys is None or len(xs) != len(ys):
            continue
        if last and b.strip() == b[sb:eb] and all(numeric_cell(y) is not None for y in ys):
            continue  # "… = [0.016, 0.865]": the chain's printed result
        seen = _NUMBERS.findall(b[:sb])
        for x, y in zip(xs, ys, strict=True):
            number = numeric_cell(y.strip("()"))
            if number is not None:
                if numeric_cell(x.strip("()")) is None and is_arithmetic(x):
                    out.append((k, (x,), number, seen[:]))
                seen.append(number)
                continue
            for _, terms, value, inner in term_links([x, y]):
                out.append((k, terms, value, seen + inner))
            seen.extend(_NUMBERS.findall(y))
    return out


def _lists(plain: str) -> list[tuple[int, int]]:
    """The spans of the top-level bracketed lists of a plain link (not of matrices)."""
    out: list[tuple[int, int]] = []
    depth = start = 0
    for i, ch in enumerate(plain):
        if ch in "([{":
            if depth == 0:
                start = i
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                return []
            if depth == 0 and ch == "]" and plain[start] == "[":
                out.append((start, i + 1))
    return [(s, e) for s, e in out if "[" not in plain[s + 1 : e - 1]]


def _skeleton(plain: str, spans: list[tuple[int, int]]) -> str:
    """The link with each list written as ``L`` and no spaces."""
    out, at = [], 0
    for s, e in spans:
        out += [plain[at:s], "L"]
        at = e
    out.append(plain[at:])
    return re.sub(r"\s+", "", "".join(out))


def _entries(text: str) -> list[str] | None:
    """The entries of a bracketed list (``[a, b/c]``), split at its top-level commas."""
    entries: list[str] = []
    depth, start = 0, 1
    for i, ch in enumerate(text[1:-1], 1):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            entries.append(text[start:i].strip())
            start = i + 1
    entries.append(text[start:-1].strip())
    return entries if len(entries) >= 2 and all(entries) else None
