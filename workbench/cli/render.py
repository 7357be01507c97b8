"""What every command shares: its one expected error, how it prints (JSON for scripts, text made
safe for a terminal), plain-text tables, and the name it was invoked by."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable, Sequence

from ..text.safe_text import printable

__all__ = ["CommandError", "TEXT_KEYS", "emit", "for_people", "invoked_as", "table"]


class CommandError(Exception):
    """An expected failure: printed as one line, exits with ``code``."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


#: Payload keys whose values are bodies of text: their newlines are kept for people.
TEXT_KEYS = frozenset({"text", "answer"})


def for_people(value, key: str | None = None):
    r"""``value`` with every string made :func:`~workbench.text.safe_text.printable` (keys too).

    Names, ids and messages get their newlines escaped; the bodies under :data:`TEXT_KEYS`
    keep theirs. Used on a payload before it is rendered as text; JSON output stays exact.

    >>> for_people({"document": "a\nb.md", "text": "one\ntwo\x1b[2J"})
    {'document': 'a\\nb.md', 'text': 'one\ntwo\\x1b[2J'}
    """
    if isinstance(value, str):
        return printable(value, keep_newlines=key in TEXT_KEYS)
    if isinstance(value, dict):
        return {for_people(k): for_people(v, k if isinstance(k, str) else None) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [for_people(v, key) for v in value]
    return value


def emit(args, payload, render: Callable[[object], str]) -> None:
    """Print ``payload`` as JSON with ``--json``, else as ``render(payload)`` made safe for a
    terminal (see :func:`for_people`)."""
    if getattr(args, "json", False):
        print(json.dumps(payload, indent=2, ensure_ascii=False, default=str))
    else:
        print(printable(render(for_people(payload)), keep_newlines=True))


def invoked_as(argv0: str | None = None) -> str:
    """How the user started the command line, for its usage lines: ``workbench`` (the console
    script, whatever its path) or ``python -m workbench``.

    >>> invoked_as("/tmp/venv/bin/workbench"), invoked_as("/repo/workbench/__main__.py"), invoked_as("-c")
    ('workbench', 'python -m workbench', 'python -m workbench')
    """
    name = Path(sys.argv[0] if argv0 is None else argv0).name
    if name in ("__main__.py", "-m", "-c", "") or name.startswith("python"):
        return "python -m workbench"
    return Path(name).stem if name.endswith((".exe", ".py")) else name


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
