"""Counts as people read them: "1 document", "3 documents", "0 entities".

>>> counted(1, "document"), counted(3, "chunk"), counted(0, "entity", "entities")
('1 document', '3 chunks', '0 entities')
"""

from __future__ import annotations

__all__ = ["counted"]


def counted(count: int, word: str, many: str | None = None) -> str:
    """``count`` and ``word``, in ``many`` (default: ``word`` + "s") unless the count is one."""
    return f"{count} {word if count == 1 else (many or word + 's')}"
