"""Evaluation task sets: questions with known answers, loaded from YAML or JSONL.

A task names the gold documents (or gold chunks) a good answer needs. Gold documents may be
written as stored ids (``sample_corpus/decisions/x.md``), as paths relative to the task
file's folder (``decisions/x.md``) or as file names when unique (``x.md``);
:func:`resolve_tasks` turns them into the ids the workspace stores and raises
:class:`TaskError` naming the task file, the task and the unknown name.

Examples
--------
>>> tasks = parse_tasks([{"id": "t1", "question": "Who owns billing?",
...                       "gold_documents": ["teams/ownership.md"], "tags": ["single-hop"]}])
>>> tasks[0].gold_documents, tasks[0].tags
(('teams/ownership.md',), ('single-hop',))
>>> resolved = resolve_tasks(tasks, ["corpus/teams/ownership.md", "corpus/teams/leads.md"])
>>> resolved[0].gold_documents
('corpus/teams/ownership.md',)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

import yaml

from ..text import safe_yaml

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView

__all__ = ["EvalTask", "TaskError", "load_tasks", "parse_tasks", "resolve_tasks", "load_resolved_tasks"]


class TaskError(ValueError):
    """A task file or task that cannot be used; the message names the file, the task and the problem."""


@dataclass(frozen=True)
class EvalTask:
    """One question with a known answer."""

    id: str
    """Unique id within the task set."""
    question: str
    """The query given to every strategy."""
    gold_documents: tuple[str, ...] = ()
    """Documents a good answer needs (stored ids once resolved)."""
    gold_chunks: tuple[str, ...] = ()
    """Chunks a good answer needs; when given, scoring is at chunk level."""
    gold_entities: tuple[str, ...] = ()
    """Entities the answer involves (informative; not scored)."""
    gold_path: tuple[str, ...] = ()
    """An entity chain the answer follows, first to last (informative; not scored)."""
    tags: tuple[str, ...] = ()
    """Kinds of case: ``helps``, ``outdated``, ``contradicts``, ``single-hop``, ``multi-hop``..."""
    note: str = ""
    """Why the gold is what it is."""

    @property
    def level(self) -> str:
        """``chunk`` when the task gives gold chunks, else ``document``."""
        return "chunk" if self.gold_chunks else "document"

    @property
    def gold(self) -> tuple[str, ...]:
        """The ids scored: gold chunks if any, else gold documents."""
        return self.gold_chunks or self.gold_documents


def _strings(value: Any, field: str, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, (str, int, float)) for v in value):
        raise TaskError(f"{where}: '{field}' must be a list of strings")
    return tuple(str(v) for v in value)


_FIELDS = {"id", "question", "gold_documents", "gold_chunks", "gold_entities", "gold_path", "tags", "note"}


def parse_tasks(items: Sequence[Any], source: str = "<tasks>") -> list[EvalTask]:
    """Turn parsed task mappings into :class:`EvalTask` s, checking every field.

    Raises
    ------
    TaskError
        For a task that is not a mapping, lacks an id, a question or any gold, repeats an id,
        or has an unknown field.
    """
    tasks: list[EvalTask] = []
    seen: set[str] = set()
    for number, item in enumerate(items, start=1):
        where = f"{source}: task {number}"
        if not isinstance(item, dict):
            raise TaskError(f"{where}: expected a mapping, got {type(item).__name__}")
        task_id = str(item.get("id") or "").strip()
        if not task_id:
            raise TaskError(f"{where}: missing 'id'")
        where = f"{source}: task {task_id!r}"
        unknown = sorted(set(item) - _FIELDS)
        if unknown:
            raise TaskError(f"{where}: unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(_FIELDS))}")
        if task_id in seen:
            raise TaskError(f"{where}: duplicate task id")
        seen.add(task_id)
        question = str(item.get("question") or "").strip()
        if not question:
            raise TaskError(f"{where}: missing 'question'")
        task = EvalTask(
            id=task_id, question=question,
            gold_documents=_strings(item.get("gold_documents"), "gold_documents", where),
            gold_chunks=_strings(item.get("gold_chunks"), "gold_chunks", where),
            gold_entities=_strings(item.get("gold_entities"), "gold_entities", where),
            gold_path=_strings(item.get("gold_path"), "gold_path", where),
            tags=_strings(item.get("tags"), "tags", where),
            note=str(item.get("note") or "").strip(),
        )
        if not task.gold:
            raise TaskError(f"{where}: no gold_documents or gold_chunks; a task without gold cannot be scored")
        tasks.append(task)
    return tasks


def load_tasks(path: str | Path) -> list[EvalTask]:
    """Read a task set from ``.yaml``/``.yml`` (``tasks:`` list, or a bare list) or ``.jsonl``.

    Raises
    ------
    TaskError
        If the file is missing or unreadable, or a task is malformed (see :func:`parse_tasks`).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TaskError(f"{path}: task file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskError(f"{path}: cannot read task file: {exc}") from None
    if path.suffix.lower() == ".jsonl":
        items = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    items.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise TaskError(f"{path}: line {number}: invalid JSON ({exc.msg})") from None
    else:
        try:
            data = safe_yaml.load(text)
        except safe_yaml.YAMLRefused as exc:
            raise TaskError(f"{path}: task file {exc}") from None
        except yaml.YAMLError as exc:
            # The position only: a parser's message quotes the offending line, which may be a secret.
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
            raise TaskError(f"{path}: not a YAML task file (invalid YAML{where})") from None
        items = data.get("tasks") if isinstance(data, dict) else data  # type: ignore[assignment]
        if not isinstance(items, list):
            raise TaskError(f"{path}: expected a 'tasks:' list of tasks")
    if not items:
        raise TaskError(f"{path}: no tasks")
    return parse_tasks(items, str(path))


def _document_resolver(document_ids: Iterable[str], task_dir: Path | None,
                       source_paths: dict[str, str] | None) -> Callable[[str], str | None]:
    id_set = set(document_ids)
    # A records file is not itself a document: its records are ``<file id>#<record id>``.
    files = sorted({i.split("#", 1)[0] for i in id_set})
    file_set = set(files)
    by_source = {}
    for doc_id, source in (source_paths or {}).items():
        if "#" not in doc_id:
            by_source[str(Path(source).resolve())] = doc_id

    def unique(candidates: list[str]) -> str | None:
        return candidates[0] if len(candidates) == 1 else None

    def resolve_file(name: str) -> str | None:
        if name in file_set:
            return name
        if task_dir is not None:
            absolute = str((task_dir / name).resolve())
            if absolute in by_source:
                return by_source[absolute]
            prefixed = f"{task_dir.name}/{name}"
            if prefixed in file_set:
                return prefixed
        found = unique([i for i in files if i.endswith("/" + name)])
        if found:
            return found
        if "/" not in name:
            return unique([i for i in files if PurePosixPath(i).name == name])
        return None

    def resolve(name: str) -> str | None:
        name = name.strip().replace("\\", "/")
        if name in id_set:
            return name
        file_part, hash_, record = name.partition("#")
        file_id = resolve_file(file_part)
        if file_id is None:
            return None
        full = f"{file_id}#{record}" if hash_ else file_id
        return full if full in id_set else None

    return resolve


def resolve_tasks(tasks: Sequence[EvalTask], document_ids: Iterable[str], chunk_ids: Iterable[str] = (),
                  task_file: str | Path | None = None, source_paths: dict[str, str] | None = None) -> list[EvalTask]:
    """Rewrite every task's gold documents as stored document ids; check gold chunks exist.

    Parameters
    ----------
    tasks : the tasks as loaded.
    document_ids : the workspace's document ids.
    chunk_ids : the workspace's chunk ids (needed only when a task names gold chunks).
    task_file : the task file; gold paths are tried relative to its folder.
    source_paths : document id -> absolute source path, to match paths relative to the task file.

    Raises
    ------
    TaskError
        Naming the task file, the task id and the unknown document or chunk.
    """
    task_dir = Path(task_file).resolve().parent if task_file is not None else None
    source = str(task_file) if task_file is not None else "<tasks>"
    ids = list(document_ids)
    resolve = _document_resolver(ids, task_dir, source_paths)
    known_chunks = set(chunk_ids)
    out = []
    for task in tasks:
        docs = []
        for name in task.gold_documents:
            found = resolve(name)
            if found is None:
                raise TaskError(f"{source}: task {task.id!r}: unknown gold document {name!r}; the workspace has "
                                f"{len(ids)} documents (is the corpus ingested? ids look like {ids[0]!r})"
                                if ids else f"{source}: task {task.id!r}: unknown gold document {name!r}; "
                                            "the workspace is empty: ingest the corpus first")
            docs.append(found)
        for chunk in task.gold_chunks:
            if chunk not in known_chunks:
                raise TaskError(f"{source}: task {task.id!r}: unknown gold chunk {chunk!r}")
        out.append(replace(task, gold_documents=tuple(dict.fromkeys(docs))))
    return out


def load_resolved_tasks(ws: WorkspaceView, path: str | Path) -> list[EvalTask]:
    """Load a task file and resolve it against the documents and chunks of workspace ``ws``."""
    tasks = load_tasks(path)
    documents = ws.store.documents()
    needs_chunks = any(t.gold_chunks for t in tasks)
    return resolve_tasks(tasks, [d.id for d in documents], ws.store.chunk_ids() if needs_chunks else (),
                         task_file=path, source_paths={d.id: d.source_path for d in documents})
