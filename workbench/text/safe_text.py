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

A word mixing Latin, Cyrillic and Greek letters ("Rеdis" with a Cyrillic е) prints exactly like
the Latin word it imitates: :func:`printable` marks it, so the two never look the same.

>>> printable("R\u0435dis depends on Redis")
'Rеdis [mixed scripts: Latin+Cyrillic] depends on Redis'
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["printable", "mixed_scripts", "mark_mixed_scripts"]

#: The alphabets whose letters pass for one another (Latin "a", Cyrillic "а", Greek "α").
_LOOKALIKE_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK")
_WORD = re.compile(r"\w+")


def mixed_scripts(word: str) -> tuple[str, ...]:
    """The alphabets among Latin, Cyrillic and Greek whose letters ``word`` mixes (empty: one or none).

    >>> mixed_scripts("R\u0435dis"), mixed_scripts("Redis"), mixed_scripts("Москва"), mixed_scripts("认证Service")
    (('Latin', 'Cyrillic'), (), (), ())
    """
    if word.isascii():
        return ()
    found: list[str] = []
    for ch in word:
        if ch.isalpha() and not ch.isascii():
            script = unicodedata.name(ch, "").split(" ", 1)[0]
        elif ch.isalpha():
            script = "LATIN"
        else:
            continue
        if script in _LOOKALIKE_SCRIPTS and script.title() not in found:
            found.append(script.title())
    return tuple(found) if len(found) > 1 else ()


def mark_mixed_scripts(text: str) -> str:
    """``text`` with ``[mixed scripts: ...]`` after every word that mixes look-alike alphabets
    (once: marking a marked text changes nothing)."""
    if text.isascii():
        return text

    def mark(word: re.Match) -> str:
        scripts = mixed_scripts(word.group(0))
        if not scripts or word.string.startswith(" [mixed scripts:", word.end()):  # none, or marked already
            return word.group(0)
        return f"{word.group(0)} [mixed scripts: {'+'.join(scripts)}]"

    return _WORD.sub(mark, text)


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

    Words mixing look-alike alphabets are marked (:func:`mark_mixed_scripts`).
    """
    text = "" if text is None else str(text)
    if text.isascii() and text.isprintable():
        return text  # the common case: nothing to look at character by character
    text = mark_mixed_scripts(text)
    if text.isprintable():
        return text
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
