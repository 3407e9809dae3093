"""A matrix printed over several lines that no step explains: each row not checked is listed
on its own line in the text report, the line the JSON report gives it (``source_line``)."""

from __future__ import annotations

import json
from pathlib import Path

from symtf.commands.draft import check_article
from symtf.renderers import json as render_json
from symtf.renderers.text import unchecked_lines

# three rows no step of the article computes (nothing is given to compute them from)
POST = """# Rows

```
tensor([[0.2996, 0.8053],
        [0.3061, 0.8210],
        [0.3058, 0.8203]])
```
"""


def test_each_row_not_checked_is_listed_on_its_own_line(tmp_path: Path) -> None:
    path = tmp_path / "rows.md"
    path.write_text(POST, encoding="utf-8")
    report = check_article(path)
    listed = [ln.strip().split(":")[0] for ln in unchecked_lines(report) if "number(s)):" in ln]
    assert listed == ["line 4", "line 5", "line 6"]
    data = json.loads(json.dumps(render_json.derivation_dict(report)))
    assert [u["source_line"] for u in data["unchecked"]] == [4, 5, 6]
