"""Files -> :class:`~workbench.model.Document` s (each format read by :mod:`workbench.ingest.file_formats`).

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
import functools
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Sequence

from .file_formats import (LOADERS, MAX_FRONT_MATTER_BYTES, SUPPORTED_EXTENSIONS, LoadProblem,
                                    normalise_newlines, content_hash, normalize_timestamp, resolved_path)
from ..model import Document
from ..record.store import RECORD_FILE

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_FRONT_MATTER_BYTES",
    "SUPPORTED_EXTENSIONS",
    "CorpusWalk",
    "LoadError",
    "LoadProblem",
    "LoadResult",
    "SPECIAL_FOLDERS",
    "WalkedFile",
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


#: Bytes looked at to decide whether a file is binary.
_SNIFF_BYTES = 8192


class LoadError(Exception):
    """An argument to the loader that cannot be used at all (a path that does not exist)."""


@dataclass
class LoadResult:
    """Everything loaded from a set of paths, and what went wrong on the way."""

    documents: list[Document] = field(default_factory=list)
    problems: list[LoadProblem] = field(default_factory=list)
    clean_files: list[WalkedFile] = field(default_factory=list)
    """Files loaded without any problem (their fingerprint can stand for their documents)."""
    skipped_files: list[WalkedFile] = field(default_factory=list)
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
    workbench.ingest.loaders.LoadError: /proc/self: lies in /proc (a special filesystem of the kernel: processes, devices), not a folder of documents; refused
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


_WORKSPACE_SKIPPED = "a workbench workspace (its record, vector store and index files): not read, skipped"


def _is_workspace(folder: str) -> bool:
    """Whether ``folder`` holds a workspace's record (``./workspace`` inside the notes an
    ingest reads, by default): its files are the workbench's own, never a user's documents."""
    return os.path.isfile(os.path.join(folder, RECORD_FILE))


@dataclass(frozen=True, slots=True)
class WalkedFile:
    """One file the walk found, with what every step of an ingest asks of it."""

    path: str
    """The file as the walk reached it under its root (absolute): its document ids are made from it."""
    root: str
    """The folder given, or the file itself when it was given directly."""
    source: str
    """Its real path (:func:`resolved_path`), by which the record names it."""
    stat: os.stat_result | None
    """Its ``stat`` (a link followed), taken by the walk; None when that failed."""


class CorpusWalk:
    """The files under ``paths`` (only those ``within``, given those; see :func:`_walk`), walked once,
    when first asked: an ingest's size limit, load and removals all read this one listing and its
    stats, instead of each walking the folders and asking for every file's size or real path again.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp()) / "notes"
    >>> folder.mkdir()
    >>> _ = (folder / "a.md").write_text("hello")
    >>> [(Path(f.path).name, f.stat.st_size) for f in CorpusWalk([folder]).files]
    [('a.md', 5)]
    """

    def __init__(self, paths: Sequence[str | Path], within: Sequence[str | Path] | None = None) -> None:
        self.paths, self.within = list(paths), within

    @functools.cached_property
    def entries(self) -> list[WalkedFile | LoadProblem]:
        """The files found and the paths left out (a problem line each), in the walk's order."""
        return list(_walk(self.paths, self.within))

    @functools.cached_property
    def files(self) -> list[WalkedFile]:
        """The files found, in the walk's order."""
        return [entry for entry in self.entries if isinstance(entry, WalkedFile)]


def _stat_or_none(stat_of: Callable[[], os.stat_result]) -> os.stat_result | None:
    try:
        return stat_of()
    except OSError:  # gone since it was listed: the load reports it when it tries to read it
        return None


def _walk(paths: Sequence[str | Path], within: Sequence[str | Path] | None = None
          ) -> Iterator[WalkedFile | LoadProblem]:
    """Yield every file under ``paths``, and a problem line for every path left out.

    Only what lies under the given paths is read: a symbolic link is never followed out of
    them; one to a file inside them yields that file by its real place (read once); one to a
    folder is not entered (its target is walked where it lies). ``/proc``, ``/sys`` and
    ``/dev`` are refused by name. Hidden names (starting with ``.``) are left out silently; a
    workspace folder (the ingest's own, inside the folder it reads, or any other) in one line.

    ``within``: only these files and folders under ``paths`` (those a watched folder changed) are
    read, each by the same rules and with its id still relative to its root; one that is gone,
    hidden below its root or outside every path is left out. The rest of ``paths`` is not listed.

    Each folder is listed once (:func:`os.scandir`, whose entries tell files from folders and links
    without asking the system again), and a file's real path is its folder's and its name: the
    cost per file is its ``stat``.
    """
    roots = check_paths(paths)

    def root_of(real: str) -> tuple[str, str] | None:
        found = [(str(p), r) for p, r in roots if os.path.isdir(r) and _under(real, r)]
        return max(found, key=lambda pr: len(pr[1])) if found else None

    def skipped(item: str, root: str, message: str) -> LoadProblem:
        return LoadProblem(_relative_id(Path(item), Path(root)), message)

    def visit(item: str, real: str, root: str, link: bool, folder: bool, stat_of: Callable[[], os.stat_result],
              seen: set[str], subfolders: list[tuple[str, str]]) -> WalkedFile | LoadProblem | None:
        """One entry of a folder under ``root`` (``real``: its real path, unless it is a link): a file
        or a problem returned, a folder to enter kept in ``subfolders``."""
        if link:
            target = os.path.realpath(item)
            inside = root_of(target)
            if not os.path.exists(target):
                return skipped(item, root, "cannot read file (dangling or looping symbolic link), skipped")
            if inside is None or _special_folder(target):
                return skipped(item, root, f"symbolic link to {target}, outside the folders being ingested: "
                                           "not followed, skipped")
            if os.path.isdir(target):
                return skipped(item, root, "symbolic link to a folder: not followed (a folder inside the ingest "
                                           "is read where it lies), skipped")
            home, home_real = inside
            return WalkedFile(os.path.join(home, os.path.relpath(target, home_real)), home, target,
                              _stat_or_none(functools.partial(os.stat, target)))
        if folder:
            real_sub = os.path.realpath(item)
            special = _special_folder(real_sub)
            if special:
                return skipped(item, root, f"lies in {special}, a special filesystem: not read, skipped")
            if _is_workspace(real_sub):
                return skipped(item, root, _WORKSPACE_SKIPPED)
            if real_sub not in seen:
                seen.add(real_sub)
                subfolders.append((item, real_sub))
            return None
        return WalkedFile(item, root, real, _stat_or_none(stat_of))

    for path, real in roots:
        top = str(path)
        if not os.path.isdir(real):
            if within is None or path in {Path(os.path.abspath(changed)) for changed in within}:
                # a file given directly is read even through a link: it was named
                yield WalkedFile(top, top, real, _stat_or_none(functools.partial(os.stat, top)))
            continue
        if _is_workspace(real):
            yield skipped(top, top, _WORKSPACE_SKIPPED)
            continue
        seen: set[str] = {real}
        stack = [(top, real)]
        if within is not None:  # the changed items under this root, each as an entry of its folder
            stack = []
            for changed in within:
                item = Path(os.path.abspath(changed))
                inside = item.relative_to(path).parts if item.is_relative_to(path) else None
                if not inside or any(part.startswith(".") for part in inside) or not os.path.lexists(item):
                    continue
                folders = [os.path.join(real, *inside[:n]) for n in range(1, len(inside))]
                if os.path.realpath(item.parent) != os.path.join(real, *inside[:-1]) or any(map(_is_workspace, folders)):
                    continue  # reached through a linked folder, or inside a workspace: the walk never enters them
                try:
                    found = visit(str(item), os.path.join(real, *inside), top, item.is_symlink(), item.is_dir(),
                                  functools.partial(os.stat, item), seen, stack)
                except OSError as exc:
                    found = skipped(str(item), top, f"cannot read ({exc.strerror or exc}; it changed while the "
                                                    "folder was read), skipped")
                if found is not None:
                    yield found
        while stack:
            folder, folder_real = stack.pop()
            try:
                with os.scandir(folder) as listing:
                    entries = sorted((e for e in listing if not e.name.startswith(".")), key=lambda e: e.name)
            except OSError as exc:
                yield skipped(folder, top, f"cannot read folder ({exc.strerror or exc}), skipped")
                continue
            subfolders: list[tuple[str, str]] = []
            inside_real = os.path.join(folder_real, "")
            for entry in entries:
                try:
                    link, subfolder = entry.is_symlink(), entry.is_dir(follow_symlinks=False)
                    if link or subfolder:
                        found = visit(entry.path, inside_real + entry.name, top, link, subfolder, entry.stat, seen,
                                      subfolders)
                    else:  # most entries: a file, made here without a call per file
                        found = WalkedFile(entry.path, top, inside_real + entry.name, _stat_or_none(entry.stat))
                except OSError as exc:  # gone, or changed, between the listing and now
                    found = skipped(os.path.join(folder, entry.name), top, f"cannot read ({exc.strerror or exc}; "
                                                                           "it changed while the folder was read), skipped")
                if found is not None:
                    yield found
            stack.extend(reversed(subfolders))  # depth first, in name order


def iter_files(paths: Sequence[str | Path], within: Sequence[str | Path] | None = None) -> Iterator[tuple[Path, Path]]:
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
    for file in CorpusWalk(paths, within).files:
        yield Path(file.path), Path(file.root)


def _relative_id(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root.parent).as_posix()
    except ValueError:
        return path.as_posix()


def load_paths(paths: Sequence[str | Path], skip: Callable[[WalkedFile], bool] | None = None,
               within: Sequence[str | Path] | None = None, *, walk: CorpusWalk | None = None) -> LoadResult:
    """Load every supported file under ``paths``.

    Parameters
    ----------
    paths
        Files and folders. Folders are walked recursively (see :func:`iter_files`).
    skip
        Files for which ``skip(file)`` is true are listed in ``skipped_files``, not loaded
        (an ingest passes the files whose content it already holds).
    within
        Only these files and folders under ``paths`` are loaded (see :func:`_walk`).
    walk
        The :class:`CorpusWalk` of these ``paths`` and ``within`` when the caller has one (an
        ingest, which read the files' sizes from it first): its files and stats are used.

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
    seen_files: set[str] = set()
    seen_ids: dict[str, str] = {}
    for file in (walk or CorpusWalk(paths, within)).entries:
        if isinstance(file, LoadProblem):
            result.problems.append(file)
            continue
        if file.path in seen_files:
            continue
        seen_files.add(file.path)
        if skip is not None and skip(file):
            result.skipped_files.append(file)
            continue
        documents, problems = load_file(Path(file.path), Path(file.root))
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
        loader = LOADERS.get(path.suffix.lower())
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


#: Byte-order marks and their codecs, the UTF-32 ones first: UTF-32 LE's starts with UTF-16 LE's.
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def _bomless_utf16(sample: bytes) -> str | None:
    r"""``'utf-16-le'`` or ``'utf-16-be'`` when ``sample`` is plainly UTF-16 without a byte-order
    mark: mostly ASCII text, so every other byte is NUL (in the odd places little-endian, the
    even ones big-endian) and no byte of the other places is.

    >>> _bomless_utf16("---\ntitle: x\n---\n".encode("utf-16-le")), _bomless_utf16(b"\x00\x01\x02\x03")
    ('utf-16-le', None)
    """
    sample = sample[:len(sample) - len(sample) % 2]
    if len(sample) < 8:
        return None
    even, odd = sample[0::2], sample[1::2]
    for codec, text, zeros in (("utf-16-le", even, odd), ("utf-16-be", odd, even)):
        if b"\x00" not in text and zeros.count(0) >= 0.9 * len(zeros):
            return codec
    return None


def _decode(data: bytes, file_id: str, problems: list[LoadProblem]) -> str:
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                text = data.decode(codec)
            except UnicodeDecodeError:
                raise _Skip(f"binary file, skipped (not {codec.upper()} after its byte-order mark)") from None
            return normalise_newlines(text.removeprefix("\ufeff"))  # a second mark, as some editors write
    sample = data[:_SNIFF_BYTES]
    wide = _bomless_utf16(sample) if len(data) % 2 == 0 else None
    if wide is not None:
        try:
            text = data.decode(wide)
        except UnicodeDecodeError:
            raise _Skip("binary file, skipped") from None
        head = text[:_SNIFF_BYTES // 2]
        if sum(ch < " " and ch not in "\t\n\r\f\x1b" for ch in head) > len(head) * 0.1:  # small numbers, not text
            raise _Skip("binary file, skipped (mostly control characters)")
        problems.append(LoadProblem(file_id, f"no byte-order mark; decoded as {wide.upper()}", skipped=False))
        return normalise_newlines(text.removeprefix("\ufeff"))
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
    return normalise_newlines(text)
