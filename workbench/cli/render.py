"""Plain-text tables for the command line."""

from __future__ import annotations

from typing import Sequence

from ..safe_text import printable

__all__ = ["table"]


def table(rows: Sequence[dict], columns: Sequence[str], max_width: int = 60) -> str:
    """Render dicts as an aligned text table, every cell on one line (control characters escaped).

    >>> print(table([{"a": 1, "b": "x"}], ["a", "b"]))
    a  b
    -  -
    1  x
    """
    if not rows:
        return "(none)"

    def cell(v) -> str:
        if isinstance(v, (list, tuple)):
            v = ", ".join(map(str, v))
        s = printable(v)  # one line per row: a newline in a name shows as \n
        return s if len(s) <= max_width else s[: max_width - 1] + "…"

    cells = [[cell(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip(),
             "  ".join("-" * w for w in widths).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(lines)
