"""Files -> :class:`~workbench.model.Document` s.

Supported files: ``.txt`` (plain text), ``.md`` / ``.markdown`` (YAML front matter with
``title``, ``date``, ``tags`` and ``relations``), ``.jsonl`` (one chat message or one
``{"id", "title", "text"}`` record per line) and ``.json`` (a list of records or messages).

Nothing about an individual file raises: every problem becomes a :class:`LoadProblem` that
names the file (and line) and says whether the file was skipped. :class:`LoadError` is raised
only for arguments that cannot be used at all, such as a path that does not exist.

Document ids are POSIX paths relative to the parent of the ingest root, so ingesting the
folder ``corpus/`` gives ``corpus/notes/a.md``; a single file given directly is named by its
file name. A record of a records file is ``"<file id>#<record id>"``.

Examples
--------
>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp()) / "notes"
>>> folder.mkdir()
>>> _ = (folder / "a.md").write_text("---\\ntitle: Auth\\ntags: [security]\\n---\\nAuth uses Redis.\\n")
>>> _ = (folder / "logo.png").write_bytes(b"\\x89PNG\\r\\n\\x1a\\n\\x00\\x00")
>>> result = load_paths([folder])
>>> [(d.id, d.title, d.tags, d.text) for d in result.documents]
[('notes/a.md', 'Auth', ('security',), 'Auth uses Redis.\\n')]
>>> print(result.problems[0])
notes/logo.png: skipped: unsupported extension .png
"""

from __future__ import annotations

import codecs
import datetime as dt
import functools
import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import frontmatter
import yaml

from workbench import safe_yaml
from workbench.model import DECLARED_RELATION_TYPES, DeclaredRelation, Document, Segment

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_FRONT_MATTER_BYTES",
    "SUPPORTED_EXTENSIONS",
    "LoadError",
    "LoadProblem",
    "LoadResult",
    "SPECIAL_FOLDERS",
    "check_paths",
    "iter_files",
    "load_file",
    "resolved_path",
    "load_paths",
    "content_hash",
    "normalize_timestamp",
]

#: Files larger than this are skipped with a problem rather than read.
MAX_FILE_BYTES = 200 * 1024 * 1024

#: Front matter larger than this is not parsed (the file loads as plain text, with a warning).
MAX_FRONT_MATTER_BYTES = 64 * 1024

#: Bytes looked at to decide whether a file is binary.
_SNIFF_BYTES = 8192

# Field names accepted for chat messages, in order of preference.
_SPEAKER_KEYS = ("speaker", "role", "author", "user", "from", "name", "sender")
_MESSAGE_TEXT_KEYS = ("text", "content", "message", "body")
_TIME_KEYS = ("timestamp", "time", "ts", "date", "created_at", "datetime")

_HEADING = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_FRONT_MATTER_START = re.compile(r"-{3,}[ \t]*\r?\n")
_RELATION_NAME_SEPARATORS = re.compile(r"[\s\-]+")


class LoadError(Exception):
    """An argument to the loader that cannot be used at all (a path that does not exist)."""


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


@dataclass
class LoadResult:
    """Everything loaded from a set of paths, and what went wrong on the way."""

    documents: list[Document] = field(default_factory=list)
    problems: list[LoadProblem] = field(default_factory=list)
    clean_files: list[Path] = field(default_factory=list)
    """Files loaded without any problem (their fingerprint can stand for their documents)."""
    skipped_files: list[Path] = field(default_factory=list)
    """Files the caller's ``skip`` said it already has, not loaded."""


# --------------------------------------------------------------------------- files


#: Folders of kernel and device state, not documents: refused by name, however reached.
SPECIAL_FOLDERS = ("/proc", "/sys", "/dev")


def _special_folder(real: str) -> str | None:
    """The special folder ``real`` lies in (``/proc``...), or None."""
    return next((top for top in SPECIAL_FOLDERS if real == top or real.startswith(top + "/")), None)


def _under(real: str, folder: str) -> bool:
    return real == folder or real.startswith(folder.rstrip("/") + "/")


def check_paths(paths: Sequence[str | Path]) -> list[tuple[Path, str]]:
    """``(absolute path, real path)`` of each path to load, or :class:`LoadError` for one that
    does not exist or lies in ``/proc``, ``/sys`` or ``/dev``. Reads nothing but their names.

    >>> check_paths(["/proc/self"])
    Traceback (most recent call last):
    ...
    workbench.loaders.LoadError: /proc/self: lies in /proc (a special filesystem of the kernel: processes, devices), not a folder of documents; refused
    """
    roots: list[tuple[Path, str]] = []
    for given in paths:
        path = Path(os.path.abspath(given))
        if not path.exists() and not path.is_symlink():
            raise LoadError(f"{given}: no such file or folder; give an existing file or folder to load")
        real = os.path.realpath(path)
        special = _special_folder(real)
        if special:
            raise LoadError(f"{given}: lies in {special} (a special filesystem of the kernel: processes, devices), "
                            "not a folder of documents; refused")
        roots.append((path, real))
    return roots


def _walk(paths: Sequence[str | Path], walk_errors: list[LoadProblem]) -> Iterator[tuple[Path, Path]]:
    """Yield ``(file, root)`` under ``paths``; every path left out gets one problem line.

    Only what lies under the given paths is read: a symbolic link is never followed out of
    them; one to a file inside them yields that file by its real place (read once); one to a
    folder is not entered (its target is walked where it lies). ``/proc``, ``/sys`` and
    ``/dev`` are refused by name. Hidden names (starting with ``.``) are left out silently.
    """
    roots = check_paths(paths)

    def root_of(real: str) -> tuple[Path, str] | None:
        found = [(p, r) for p, r in roots if os.path.isdir(r) and _under(real, r)]
        return max(found, key=lambda pr: len(pr[1])) if found else None

    def skip(file: Path, root: Path, message: str) -> None:
        walk_errors.append(LoadProblem(_relative_id(file, root), message))

    for path, real in roots:
        if not os.path.isdir(real):
            yield path, path  # a file given directly is read even through a link: it was named
            continue
        seen: set[str] = {real}
        stack = [path]
        while stack:
            folder = stack.pop()
            try:
                with os.scandir(folder) as listing:
                    entries = sorted((e for e in listing if not e.name.startswith(".")), key=lambda e: e.name)
            except OSError as exc:
                skip(folder, path, f"cannot read folder ({exc.strerror or exc}), skipped")
                continue
            subfolders = []
            for entry in entries:
                item = Path(folder) / entry.name
                try:
                    if entry.is_symlink():
                        target = os.path.realpath(item)
                        inside = root_of(target)
                        if not os.path.exists(target):
                            skip(item, path, "cannot read file (dangling or looping symbolic link), skipped")
                        elif inside is None or _special_folder(target):
                            skip(item, path, f"symbolic link to {target}, outside the folders being ingested: "
                                             "not followed, skipped")
                        elif os.path.isdir(target):
                            skip(item, path, "symbolic link to a folder: not followed (a folder inside the ingest "
                                             "is read where it lies), skipped")
                        else:
                            home, home_real = inside
                            yield home / os.path.relpath(target, home_real), home
                    elif entry.is_dir(follow_symlinks=False):
                        real_sub = os.path.realpath(item)
                        special = _special_folder(real_sub)
                        if special:
                            skip(item, path, f"lies in {special}, a special filesystem: not read, skipped")
                        elif real_sub not in seen:
                            seen.add(real_sub)
                            subfolders.append(item)
                    else:
                        yield item, path
                except OSError as exc:  # gone, or changed, between the listing and now
                    skip(item, path, f"cannot read ({exc.strerror or exc}; it changed while the folder was read), skipped")
            stack.extend(reversed(subfolders))  # depth first, in name order


def iter_files(paths: Sequence[str | Path]) -> Iterator[tuple[Path, Path]]:
    """Yield ``(file, root)`` for every file under ``paths``, in a deterministic order.

    A folder is walked recursively, sorted by name, skipping hidden files and folders (names
    starting with ``.``); symbolic links are never followed out of the given paths (see
    :func:`_walk`). A file given directly is yielded as its own root. Ids are taken relative
    to ``root.parent``.

    Raises
    ------
    LoadError
        When a path does not exist, or lies in ``/proc``, ``/sys`` or ``/dev``.
    """
    yield from _walk(paths, [])


def _relative_id(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root.parent).as_posix()
    except ValueError:
        return path.as_posix()


def load_paths(paths: Sequence[str | Path], skip: Callable[[Path], bool] | None = None) -> LoadResult:
    """Load every supported file under ``paths``.

    Parameters
    ----------
    paths
        Files and folders. Folders are walked recursively (see :func:`iter_files`).
    skip
        Files for which ``skip(file)`` is true are listed in ``skipped_files``, not loaded
        (an ingest passes the files whose content it already holds).

    Returns
    -------
    LoadResult
        The documents, in file order, and every problem met. A document id seen twice keeps
        its first document and reports the others.

    Raises
    ------
    LoadError
        When a path does not exist (checked before anything is loaded).
    """
    missing = [str(p) for p in paths if not os.path.lexists(p)]
    if missing:
        raise LoadError(f"no such file or folder: {', '.join(missing)}; give existing files or folders to load")
    result = LoadResult()
    seen_files: set[Path] = set()
    seen_ids: dict[str, str] = {}
    for file, root in _walk(paths, result.problems):
        if file in seen_files:
            continue
        seen_files.add(file)
        if skip is not None and skip(file):
            result.skipped_files.append(file)
            continue
        documents, problems = load_file(file, root)
        result.problems.extend(problems)
        if not problems:
            result.clean_files.append(file)
        for doc in documents:
            if doc.id in seen_ids:
                result.problems.append(LoadProblem(doc.id, f"duplicate document id, skipped: {doc.source_path} and "
                                                           f"{seen_ids[doc.id]} both have it (ids are paths relative "
                                                           "to the folder above the one given); give the two folders "
                                                           "different names, or ingest them separately"))
                continue
            seen_ids[doc.id] = doc.source_path
            result.documents.append(doc)
    return result


def _file_kind(path: Path) -> str:
    """What a path that is not a regular file is: ``'FIFO'``, ``'character device'``..."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return "unreadable"
    kinds = ((stat.S_ISFIFO, "FIFO"), (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
             (stat.S_ISSOCK, "socket"), (stat.S_ISDIR, "folder"))
    return next((name for test, name in kinds if test(mode)), "special file")


class _Skip(Exception):
    """Internal: the file cannot be loaded; the message says why."""


def load_file(path: Path, root: Path) -> tuple[list[Document], list[LoadProblem]]:
    """Load one file into documents, never raising for anything about the file.

    Parameters
    ----------
    path
        The file.
    root
        The ingest root: the folder given (ids become relative to its parent) or the file
        itself when it was given directly (its id is then its name).
    """
    path, root = Path(os.path.abspath(path)), Path(os.path.abspath(root))
    file_id = _relative_id(path, root)
    problems: list[LoadProblem] = []
    try:
        loader = _LOADERS.get(path.suffix.lower())
        if loader is None:
            raise _Skip(f"skipped: unsupported extension {path.suffix or '(none)'}")
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise _Skip(f"cannot read file ({exc.strerror or exc}), skipped") from None
        if not path.is_file():
            raise _Skip(f"not a regular file ({_file_kind(path)}), skipped")
        if size > MAX_FILE_BYTES:
            raise _Skip(f"skipped: {size / 1e6:.0f} MB is larger than the {MAX_FILE_BYTES / 1e6:.0f} MB limit")
        try:
            data = path.read_bytes()
        except (OSError, MemoryError) as exc:
            raise _Skip(f"cannot read file ({getattr(exc, 'strerror', None) or exc}), skipped") from None
        text = _decode(data, file_id, problems)
        del data
        if not text.strip():
            raise _Skip("empty file, skipped")
        documents = loader(text, path, file_id, problems)
    except _Skip as skip:
        problems.append(LoadProblem(file_id, str(skip)))
        return [], problems
    except (RecursionError, MemoryError) as exc:  # pathological input: report, never crash
        problems.append(LoadProblem(file_id, f"too deeply nested or too large to load ({type(exc).__name__}), skipped"))
        return [], problems
    return documents, problems


# ------------------------------------------------------------------------- decoding


def _latin_fallback(error: UnicodeError) -> tuple[str, int]:
    # Decode each invalid byte as cp1252 (latin-1 where cp1252 has no character), so a file
    # that mixes UTF-8 and Windows encodings keeps both parts readable.
    assert isinstance(error, UnicodeDecodeError)
    chunk = error.object[error.start:error.end]
    chars = []
    for byte in chunk:
        try:
            chars.append(bytes([byte]).decode("cp1252"))
        except UnicodeDecodeError:
            chars.append(chr(byte))
    return "".join(chars), error.end


codecs.register_error("workbench_latin_fallback", _latin_fallback)

_CONTROL_BYTES = bytes(b for b in range(32) if b not in (9, 10, 12, 13, 27))


def _decode(data: bytes, file_id: str, problems: list[LoadProblem]) -> str:
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError:
            raise _Skip("binary file, skipped") from None
        return _normalise_newlines(text)
    sample = data[:_SNIFF_BYTES]
    if b"\x00" in sample:
        raise _Skip("binary file, skipped")
    if sample and len(sample) - len(sample.translate(None, _CONTROL_BYTES)) > len(sample) * 0.1:
        raise _Skip("binary file, skipped (mostly control characters)")
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(LoadProblem(
            file_id,
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); invalid bytes decoded as latin-1 (cp1252)",
            skipped=False,
        ))
        text = data.decode("utf-8", errors="workbench_latin_fallback")
    return _normalise_newlines(text)


def _normalise_newlines(text: str) -> str:
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


# ---------------------------------------------------------------------- documents


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
    """``str(path.resolve())``, with each folder resolved once for all the files in it (20,000
    notes: 40,000 resolutions of every folder above them took 2 s of an ingest that changed one).

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


# ----------------------------------------------------------------------- markdown


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


# ------------------------------------------------------------- records and messages


def normalize_timestamp(value: Any) -> str | None:
    """A timestamp as an ISO 8601 string when it can be parsed, else the value as written.

    Numbers are epoch seconds (milliseconds or microseconds when too large to be seconds).

    Examples
    --------
    >>> normalize_timestamp(0)
    '1970-01-01T00:00:00+00:00'
    >>> normalize_timestamp("2024-03-01 09:30Z")
    '2024-03-01T09:30:00+00:00'
    >>> normalize_timestamp("last Tuesday")
    'last Tuesday'
    """
    if value is None or value == "" or isinstance(value, bool):
        return None
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
        seconds = float(value)
        while abs(seconds) > 1e11:  # milliseconds, microseconds...
            seconds /= 1000
        try:
            return dt.datetime.fromtimestamp(seconds, tz=dt.timezone.utc).isoformat()
        except (OverflowError, OSError, ValueError):
            return str(value)
    return str(value)


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
        return _Message(_speaker(speaker), text, normalize_timestamp(_first(obj, _TIME_KEYS)[1]))
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
        text = _normalise_newlines(record.text)
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
            items.append(found)
    return _documents_or_problem(items, path, file_id, problems)


_LOADERS = {
    ".txt": _load_text,
    ".md": _load_markdown,
    ".markdown": _load_markdown,
    ".jsonl": _load_jsonl,
    ".json": _load_json,
}

#: File extensions the loader reads; anything else is reported and skipped.
SUPPORTED_EXTENSIONS = tuple(_LOADERS)
