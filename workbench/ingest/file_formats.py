"""One file's text -> :class:`~workbench.model.Document` s, by format, and the problems found.

``.txt`` is one plain-text document; ``.md`` / ``.markdown`` one document whose YAML front
matter gives ``title``, ``date``, ``tags`` and ``relations``; ``.jsonl`` one chat message or one
``{"id", "title", "text"}`` record per line; ``.json`` a list of records or messages (a chat log
is one conversation document with a segment per message). :data:`LOADERS` maps each extension
to its reader; :mod:`workbench.ingest.loaders` finds the files, reads and decodes them and calls it.
Nothing about a file raises: every problem is a :class:`LoadProblem` naming the file (and line).
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import frontmatter
import yaml

from ..text import safe_yaml
from ..model import DECLARED_RELATION_TYPES, DeclaredRelation, Document, Segment

__all__ = ["LOADERS", "SUPPORTED_EXTENSIONS", "MAX_FRONT_MATTER_BYTES", "LoadProblem", "content_hash", "resolved_path",
           "normalize_timestamp", "Undated"]


#: Front matter larger than this is not parsed (the file loads as plain text, with a warning).
MAX_FRONT_MATTER_BYTES = 64 * 1024


# Field names accepted for chat messages, in order of preference.
_SPEAKER_KEYS = ("speaker", "role", "author", "user", "from", "name", "sender")
_MESSAGE_TEXT_KEYS = ("text", "content", "message", "body")
_TIME_KEYS = ("timestamp", "time", "ts", "date", "created_at", "datetime")

_HEADING = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_FRONT_MATTER_START = re.compile(r"-{3,}[ \t]*\r?\n")
_RELATION_NAME_SEPARATORS = re.compile(r"[\s\-]+")


@dataclass(frozen=True)
class LoadProblem:
    """Something wrong with one file (or one line of it).

    Examples
    --------
    >>> print(LoadProblem("notes/bad.jsonl", "invalid JSON (Expecting ',' delimiter)", line=3))
    notes/bad.jsonl: line 3: invalid JSON (Expecting ',' delimiter)
    """

    path: str
    """The file, as its document id (relative POSIX path)."""
    message: str
    """What was wrong, and what was done about it."""
    line: int | None = None
    """1-based line number, when the problem is one line of the file."""
    skipped: bool = True
    """True when the file or line was not loaded; False when it loaded with a caveat."""

    def __str__(self) -> str:
        where = f"{self.path}: line {self.line}" if self.line is not None else self.path
        return f"{where}: {self.message}"


def normalise_newlines(text: str) -> str:
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def content_hash(
    text: str,
    title: str,
    date: str | None = None,
    tags: Sequence[str] = (),
    relations: Sequence[DeclaredRelation] = (),
    segments: Sequence[Segment] = (),
) -> str:
    """SHA-256 over a document's text and metadata: a change to any of them changes it.

    Examples
    --------
    >>> content_hash("a", "t") == content_hash("a", "t")
    True
    >>> content_hash("a", "t") == content_hash("a", "t", tags=("x",))
    False
    """
    digest = hashlib.sha256(text.encode("utf-8", errors="surrogatepass"))
    meta = [title, date, list(tags), [[r.relation, r.target] for r in relations],
            [[s.start, s.end, s.speaker, s.timestamp] for s in segments]]
    digest.update(b"\x00")
    digest.update(json.dumps(meta, ensure_ascii=False).encode("utf-8", errors="surrogatepass"))
    return digest.hexdigest()


def resolved_path(path: Path) -> str:
    """``str(path.resolve())``, with each folder resolved once for all the files in it (resolving
    every folder above each of many notes again was most of an ingest that changed one).

    >>> resolved_path(Path("a/b.md")) == str(Path("a/b.md").resolve())
    True
    """
    text = os.fspath(path)
    folder, name = os.path.split(text)
    if name in ("", ".", "..") or os.path.islink(text):
        return str(Path(text).resolve())
    return os.path.join(_folder_resolved(folder, os.getcwd()), name)


@functools.lru_cache(maxsize=4096)
def _folder_resolved(folder: str, cwd: str) -> str:  # cwd is part of the key: relative paths depend on it
    return str(Path(folder).resolve())


def _document(file_id: str, path: Path, title: str, kind: str, text: str, **meta: Any) -> Document:
    return Document(
        id=file_id, source_path=resolved_path(path), title=title, kind=kind, text=text,
        content_hash=content_hash(text, title, meta.get("date"), meta.get("tags", ()),
                                  meta.get("relations", ()), meta.get("segments", ())),
        **meta,
    )


def _load_text(text: str, path: Path, file_id: str, problems: list[LoadProblem]) -> list[Document]:
    return [_document(file_id, path, path.stem, "text", text)]


def _split_front_matter(text: str, file_id: str, problems: list[LoadProblem]) -> tuple[dict, str]:
    """Return (metadata, body); on bad front matter report it and keep the whole text."""
    if not _FRONT_MATTER_START.match(text):
        return {}, text
    handler = frontmatter.YAMLHandler()
    try:
        raw, body = handler.split(text)
    except ValueError:
        problems.append(LoadProblem(file_id, "front matter has no closing '---' line; loaded the whole file as plain text", skipped=False))
        return {}, text
    try:
        metadata = safe_yaml.load(raw, max_bytes=MAX_FRONT_MATTER_BYTES)
    except safe_yaml.YAMLRefused as exc:
        problems.append(LoadProblem(file_id, f"front matter {exc}; loaded the whole file as plain text", skipped=False))
        return {}, text
    except yaml.YAMLError as exc:
        reason = " ".join(str(exc).split())
        problems.append(LoadProblem(file_id, f"invalid front matter YAML ({reason}); loaded the whole file as plain text", skipped=False))
        return {}, text
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        problems.append(LoadProblem(file_id, f"front matter is a {type(metadata).__name__}, not a mapping of fields; loaded the whole file as plain text", skipped=False))
        return {}, text
    return metadata, body.lstrip("\n")


def _as_date(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return str(value).strip() or None


def _as_tags(value: Any, file_id: str, problems: list[LoadProblem]) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        items: list[Any] = value.split(",")
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        problems.append(LoadProblem(file_id, f"tags must be a list or a comma-separated string, got {type(value).__name__}; tags ignored", skipped=False))
        return ()
    tags = (str(t).strip() for t in items if t is not None)
    return tuple(dict.fromkeys(t for t in tags if t))


def _as_relations(value: Any, file_id: str, problems: list[LoadProblem]) -> tuple[DeclaredRelation, ...]:
    pairs: list[tuple[Any, Any]] = []
    if value is None:
        return ()
    if isinstance(value, dict):
        for rel_type, targets in value.items():
            for target in targets if isinstance(targets, (list, tuple)) else [targets]:
                pairs.append((rel_type, target))
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict) and len(item) == 1 and not ({"type", "relation", "target", "to"} & set(item)):
                (rel_type, target), = item.items()  # the short form "- DEPENDS_ON: x"
                for t in target if isinstance(target, (list, tuple)) else [target]:
                    pairs.append((rel_type, t))
            elif isinstance(item, dict):
                pairs.append((item.get("type", item.get("relation")), item.get("target", item.get("to"))))
            else:
                problems.append(LoadProblem(file_id, f"relation {item!r} is not a {{type, target}} mapping; ignored", skipped=False))
    else:
        problems.append(LoadProblem(file_id, f"relations must be a list or a mapping, got {type(value).__name__}; ignored", skipped=False))
        return ()
    relations = []
    for rel_type, target in pairs:
        name = _RELATION_NAME_SEPARATORS.sub("_", str(rel_type or "").strip()).upper()
        if name not in DECLARED_RELATION_TYPES:
            problems.append(LoadProblem(
                file_id,
                f"unknown relation type {rel_type!r} (use one of {', '.join(DECLARED_RELATION_TYPES)}); relation ignored",
                skipped=False,
            ))
            continue
        if target is None or not str(target).strip():
            problems.append(LoadProblem(file_id, f"relation {name} has no target; ignored", skipped=False))
            continue
        relations.append(DeclaredRelation(name, str(target).strip()))
    return tuple(dict.fromkeys(relations))


def _load_markdown(text: str, path: Path, file_id: str, problems: list[LoadProblem]) -> list[Document]:
    metadata, body = _split_front_matter(text, file_id, problems)
    title = str(metadata.get("title") or "").strip()
    if not title:
        heading = _HEADING.search(body)
        title = heading.group(1).strip() if heading else path.stem
    return [_document(
        file_id, path, title, "markdown", body,
        date=_as_date(metadata.get("date")),
        tags=_as_tags(metadata.get("tags"), file_id, problems),
        relations=_as_relations(metadata.get("relations"), file_id, problems),
    )]


#: Epoch numbers are seconds below this magnitude, then milliseconds, microseconds and
#: nanoseconds, each unit up to a thousand times more; past the last one a number is no time.
_EPOCH_SECONDS_BELOW = 1e11
_EPOCH_UNITS = (1, 1e3, 1e6, 1e9)


class Undated(ValueError):
    """A timestamp that names no time between the years 1 and 9999; the message says why."""


def normalize_timestamp(value: Any) -> str | None:
    """A timestamp as an ISO 8601 string when it can be parsed, else the value as written.

    Numbers are epoch seconds (milliseconds, microseconds or nanoseconds when too large to be
    seconds; a negative number is always seconds). A number that is not finite or names a time
    outside the years 1 to 9999 raises :class:`Undated`.

    Examples
    --------
    >>> normalize_timestamp(0)
    '1970-01-01T00:00:00+00:00'
    >>> normalize_timestamp(1_700_000_000_000)
    '2023-11-14T22:13:20+00:00'
    >>> normalize_timestamp("2024-03-01 09:30Z")
    '2024-03-01T09:30:00+00:00'
    >>> normalize_timestamp("last Tuesday")
    'last Tuesday'
    >>> normalize_timestamp("inf")
    Traceback (most recent call last):
    ...
    workbench.ingest.file_formats.Undated: 'inf' is not a finite number
    """
    if value is None or value == "" or isinstance(value, bool):
        return None
    shown = _shown(value)
    if isinstance(value, str):
        stripped = value.strip()
        try:
            return dt.datetime.fromisoformat(stripped).isoformat()
        except ValueError:
            pass
        try:
            value = float(stripped)
        except ValueError:
            return stripped or None
    if isinstance(value, (int, float)):
        try:
            seconds = float(value)
        except OverflowError:  # an integer past the floats
            raise Undated(f"{shown} is past every epoch unit (seconds to nanoseconds)") from None
        if not math.isfinite(seconds):
            raise Undated(f"{shown} is not a finite number")
        if seconds > 0:  # seconds, or the first unit that makes it a time before 5138
            unit = next((u for u in _EPOCH_UNITS if seconds < _EPOCH_SECONDS_BELOW * u), None)
            if unit is None:
                raise Undated(f"{shown} is past every epoch unit (seconds to nanoseconds)")
            seconds /= unit
        try:
            return dt.datetime.fromtimestamp(seconds, tz=dt.timezone.utc).isoformat()
        except (OverflowError, OSError, ValueError):
            raise Undated(f"{shown} is outside the years 1 to 9999") from None
    return str(value)


def _shown(value: Any) -> str:
    """``value`` as written in a message: its repr, cut to 40 characters."""
    try:
        text = repr(value)
    except ValueError:  # an integer of more digits than Python prints
        return "a number of thousands of digits"
    return text if len(text) <= 40 else text[:37] + "..."


def _timestamp(value: Any) -> tuple[str | None, str | None]:
    """``(the normalized timestamp, None)``, or ``(None, why it is undated)``."""
    try:
        return normalize_timestamp(value), None
    except Undated as exc:
        return None, f"timestamp {exc}; the message is undated"


def _first(obj: dict, keys: Sequence[str]) -> tuple[bool, Any]:
    for key in keys:
        if key in obj:
            return True, obj[key]
    return False, None


def _message_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content given as parts: [{"type": "text", "text": ...}]
        found = [p if isinstance(p, str) else p.get("text") for p in value if isinstance(p, (str, dict))]
        parts = [p for p in found if isinstance(p, str)]
        return "\n".join(parts) if parts else None
    return None


def _speaker(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("name") or value.get("username") or value.get("id")
    return None if value is None else str(value).strip() or None


@dataclass
class _Message:
    speaker: str | None
    text: str
    timestamp: str | None
    undated: str | None = None  # why its timestamp was dropped


@dataclass
class _Record:
    id: str
    title: str
    text: str
    line: int | None


def _classify(obj: Any, line: int | None, item: int | None) -> _Message | _Record | str:
    """Turn one parsed JSON value into a message or a record, or say why it is neither."""
    if not isinstance(obj, dict):
        return f"expected a JSON object, got {type(obj).__name__}; skipped"
    has_speaker, speaker = _first(obj, _SPEAKER_KEYS)
    if "title" in obj or ("id" in obj and not has_speaker):
        text = obj.get("text")
        if not isinstance(text, str):
            return "record has no string 'text' field; skipped"
        fallback_id = f"line{line}" if line is not None else f"item{item}"
        record_id = str(obj["id"]).strip() if obj.get("id") is not None else fallback_id
        title = str(obj.get("title") or "").strip() or record_id
        return _Record(record_id or fallback_id, title, text, line)
    has_text, raw_text = _first(obj, _MESSAGE_TEXT_KEYS)
    text = _message_text(raw_text)
    if has_speaker and text is not None:
        timestamp, undated = _timestamp(_first(obj, _TIME_KEYS)[1])
        return _Message(_speaker(speaker), text, timestamp, undated)
    return ("neither a message (speaker and text fields) nor a record (id, title, text); skipped; "
            f"fields were: {', '.join(sorted(map(str, obj))) or 'none'}")


def _documents_from_items(
    items: list[_Message | _Record], path: Path, file_id: str, problems: list[LoadProblem],
) -> list[Document]:
    documents: list[Document] = []
    messages = [m for m in items if isinstance(m, _Message)]
    if messages:
        parts: list[str] = []
        segments: list[Segment] = []
        offset = 0
        for message in messages:
            body = f"{message.speaker}: {message.text}" if message.speaker else message.text
            if parts:
                offset += 2  # the blank line between messages
            parts.append(body)
            segments.append(Segment(offset, offset + len(body), message.speaker, message.timestamp))
            offset += len(body)
        documents.append(_document(file_id, path, path.stem, "conversation", "\n\n".join(parts), segments=tuple(segments)))
    seen: set[str] = set()
    for record in (r for r in items if isinstance(r, _Record)):
        if not record.text.strip():
            problems.append(LoadProblem(file_id, f"record {record.id!r} has empty text; skipped", line=record.line))
            continue
        if record.id in seen:
            problems.append(LoadProblem(file_id, f"duplicate record id {record.id!r}; skipped", line=record.line))
            continue
        seen.add(record.id)
        text = normalise_newlines(record.text)
        documents.append(_document(f"{file_id}#{record.id}", path, record.title, "record", text))
    return documents


def _load_jsonl(text: str, path: Path, file_id: str, problems: list[LoadProblem]) -> list[Document]:
    items: list[_Message | _Record] = []
    decode = json.JSONDecoder().decode
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = decode(line)
        except json.JSONDecodeError as exc:
            problems.append(LoadProblem(file_id, f"invalid JSON ({exc.msg})", line=number))
            continue
        except RecursionError:
            problems.append(LoadProblem(file_id, "JSON nested too deeply; skipped", line=number))
            continue
        found = _classify(obj, number, None)
        if isinstance(found, str):
            problems.append(LoadProblem(file_id, found, line=number))
        else:
            if isinstance(found, _Message) and found.undated:
                problems.append(LoadProblem(file_id, found.undated, line=number, skipped=False))
            items.append(found)
    return _documents_or_problem(items, path, file_id, problems)


def _documents_or_problem(items, path: Path, file_id: str, problems: list[LoadProblem]) -> list[Document]:
    """The documents of a JSON or JSONL file's items; a problem line when there are none."""
    documents = _documents_from_items(items, path, file_id, problems)
    if not documents:
        problems.append(LoadProblem(file_id, "no messages or records found, skipped"))
    return documents


def _load_json(text: str, path: Path, file_id: str, problems: list[LoadProblem]) -> list[Document]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(LoadProblem(file_id, f"invalid JSON ({exc.msg}), skipped", line=exc.lineno))
        return []
    except RecursionError:
        problems.append(LoadProblem(file_id, "JSON nested too deeply, skipped"))
        return []
    if isinstance(data, dict):
        for key in ("records", "messages", "documents", "items"):
            if isinstance(data.get(key), list):
                data = data[key]
                break
        else:
            data = [data]
    if not isinstance(data, list):
        problems.append(LoadProblem(file_id, f"expected a list of records or messages, got {type(data).__name__}; skipped"))
        return []
    items: list[_Message | _Record] = []
    for index, obj in enumerate(data):
        found = _classify(obj, None, index)
        if isinstance(found, str):
            problems.append(LoadProblem(file_id, f"item {index}: {found}"))
        else:
            if isinstance(found, _Message) and found.undated:
                problems.append(LoadProblem(file_id, f"item {index}: {found.undated}", skipped=False))
            items.append(found)
    return _documents_or_problem(items, path, file_id, problems)


#: Extension -> the reader of a file's text: ``(text, path, file id, problems) -> documents``.
LOADERS = {
    ".txt": _load_text,
    ".md": _load_markdown,
    ".markdown": _load_markdown,
    ".jsonl": _load_jsonl,
    ".json": _load_json,
}


#: File extensions the loader reads; anything else is reported and skipped.
SUPPORTED_EXTENSIONS = tuple(LOADERS)
