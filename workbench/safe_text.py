"""Text from documents made safe to show a person: control characters shown, not obeyed.

A file name or a chunk can carry terminal escapes (``ESC[2J`` clears the screen, ``ESC]0;...BEL``
sets the window title), bidirectional overrides (U+202E shows ``txt.exe`` as ``exe.txt``) and
newlines that forge extra lines of output. :func:`printable` writes every such character as an
escape (``\\x1b``, ``\\u202e``, ``\\n``), so what is shown is what is stored. Every
human-readable surface (CLI tables and messages, ingest warnings, app text) passes document
text through it; JSON output stays exact.

Examples
--------
>>> printable("report\\x1b[2J.md")
'report\\\\x1b[2J.md'
>>> printable("line one\\nline two")
'line one\\\\nline two'
>>> printable("line one\\nline two", keep_newlines=True)
'line one\\nline two'
>>> printable("invoice\\u202etxt.exe")
'invoice\\\\u202etxt.exe'
>>> printable("Zoë’s 认证服务 C++")
'Zoë’s 认证服务 C++'
"""

from __future__ import annotations

import unicodedata

__all__ = ["printable"]


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def printable(text: object, keep_newlines: bool = False) -> str:
    """``text`` with every control, format and separator character written as an escape.

    Parameters
    ----------
    text
        Anything; it is shown as ``str(text)``.
    keep_newlines
        Keep ``\\n`` and ``\\t`` as they are (for bodies of text such as a chunk); names, ids
        and one-line messages leave it False so a newline cannot forge a line of output.
    """
    text = "" if text is None else str(text)
    if text.isprintable():
        return text  # the common case: nothing to look at character by character
    # isprintable() is False for controls (Cc), format characters such as bidi overrides and
    # zero-width joiners (Cf), separators (Zl, Zp, and Zs beyond the ASCII space), surrogates
    # and unassigned code points; spaces are shown as they are, everything else escaped.
    out = []
    for ch in text:
        if ch.isprintable() or (keep_newlines and ch in "\n\t") or unicodedata.category(ch) == "Zs":
            out.append(ch)
        else:
            out.append(_escape(ch))
    return "".join(out)
