"""The sizes users have: a vault of many short notes, one very large Markdown file, one long chat log.

``bench scale --notes 20000`` writes 20,000 one-paragraph notes (:mod:`.notes_fixture`), ingests
them in a fresh child process with the configured embedder (everything embedded, as a user's
first ingest), then adds one note and ingests again in another fresh process, as a user adding
a note to the vault; then one note added, edited and removed, followed by a watch and by
``ingest`` in fresh processes, each change with its stages (:mod:`.note_writes`).
``bench scale --file-mb 30`` writes one Markdown file of that size (the
same notes as sections of one document) and ingests it the same way; ``bench scale --chat-mb 30``
does the same with one ``.jsonl`` chat log (the notes' sentences as messages, each note's talk a
minute a message, pauses between them; each message a chunk of its own, as chunking keeps them).
Each reports seconds, peak RSS (the model included) and the size of the workspace on disk.

>>> import tempfile
>>> path = write_big_markdown(Path(tempfile.mkdtemp()) / "big.md", 0.01)
>>> 10_000 <= path.stat().st_size < 12_000, path.read_text().startswith("# Engineering notebook")
(True, True)
>>> log = write_big_chat_log(Path(tempfile.mkdtemp()) / "channel.jsonl", 0.01)
>>> import json; first = json.loads(log.read_text().splitlines()[0])
>>> sorted(first), first["timestamp"]
(['speaker', 'text', 'timestamp'], '2024-01-01T09:00:00Z')
"""

from __future__ import annotations

import datetime as dt
import json
import random
import shutil
import time
from pathlib import Path
from typing import Any

from ..ingest.chunking import iter_sentences
from ..vectors.chroma_folders import folder_mib
from .note_writes import bench_note_writes
from .notes_fixture import PEOPLE, _note, write_notes
from .common import fresh_ingest

__all__ = ["bench_big_chat_log", "bench_big_file", "bench_notes", "folder_mb", "write_big_chat_log",
           "write_big_markdown"]


def write_big_markdown(path: Path, megabytes: float, seed: int = 0) -> Path:
    """One Markdown document of about ``megabytes`` MB: the generated notes as its sections."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    target = int(megabytes * 2**20)
    written = 0
    with open(path, "w", encoding="utf-8") as out:
        head = "# Engineering notebook\n\n"
        out.write(head)
        written += len(head)
        index = 0
        while written < target:
            section = "#" + _note(seed, index)[1] + "\n"  # each note's title becomes a second-level heading
            out.write(section)
            written += len(section.encode("utf-8"))
            index += 1
    return path


#: Minutes between one note's talk and the next: sessions (split at 60 minutes by default) of one
#: to a few notes.
CHAT_PAUSES = (2, 5, 15, 30, 90, 240, 600)


def write_big_chat_log(path: Path, megabytes: float, seed: int = 0) -> Path:
    """One chat log (``.jsonl``, a message a line) of about ``megabytes`` MB: each generated note's
    sentences said in turn by two people a minute apart, then a pause (:data:`CHAT_PAUSES`), from
    2024-01-01 09:00 UTC."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    target = int(megabytes * 2**20)
    start = dt.datetime(2024, 1, 1, 9, tzinfo=dt.timezone.utc)
    written = minute = index = 0
    with open(path, "w", encoding="utf-8") as out:
        while written < target:
            rng = random.Random(f"chat:{seed}:{index}")
            speakers = rng.sample(PEOPLE, 2)
            body = _note(seed, index)[1].split("\n\n", 1)[1]
            for turn, (s_start, s_end) in enumerate(iter_sentences(body)):
                stamp = (start + dt.timedelta(minutes=minute)).strftime("%Y-%m-%dT%H:%M:%SZ")
                line = json.dumps({"speaker": speakers[turn % 2], "text": body[s_start:s_end],
                                   "timestamp": stamp}) + "\n"
                out.write(line)
                written += len(line.encode("utf-8"))
                minute += 1
            minute += rng.choice(CHAT_PAUSES)
            index += 1
    return path


def folder_mb(folder: Path) -> float:
    """The size of everything under ``folder``, in MB (:func:`~workbench.vectors.chroma_folders.folder_mib`)."""
    return folder_mib(folder)


def _run(corpus: Path, folder: Path, settings, desc: str, keep: bool) -> dict:
    run = fresh_ingest(corpus, folder, settings, None, desc, keep=keep)
    figures = {"seconds": round(run["seconds"], 1), "peak_rss_mb": round(run["peak_rss_mb"]),
               "documents": run["documents"], "chunks": run["chunks"], "per_stage_s": run["stages"]}
    if keep:
        figures["workspace_mb"] = folder_mb(folder)
    return figures


def bench_notes(cache_dir: Path, settings, n: int = 20_000) -> dict:
    """``n`` short notes ingested in a fresh process, then one note added in another."""
    root = Path(cache_dir) / f"sizes-notes-{n}"
    corpus = root / "notes"
    if not corpus.exists() or len(list(corpus.iterdir())) != n:
        shutil.rmtree(corpus, ignore_errors=True)
        started = time.perf_counter()
        write_notes(corpus, n)
        written_s = time.perf_counter() - started
    else:
        written_s = 0.0
    out: dict[str, Any] = {"notes": n, "write_s": round(written_s, 1)}
    out["first_ingest"] = _run(corpus, root / "ws", settings, f"{n} notes, first ingest", keep=True)
    _, text = _note(1, n)
    (corpus / "note-added.md").write_text(text, encoding="utf-8")
    try:
        out["add_one_note"] = _add_one(corpus, root / "ws", settings)
    finally:
        (corpus / "note-added.md").unlink(missing_ok=True)
    out["note_writes"] = bench_note_writes(corpus, root / "ws", settings, text)
    return out


def _add_one(corpus: Path, folder: Path, settings) -> dict:
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(_add_one_child, (corpus, folder, settings))


def _add_one_child(corpus: Path, folder: Path, settings) -> dict:
    from ..workspace.workspace import Workspace
    from .common import RssSampler

    started = time.perf_counter()
    ws = Workspace(folder, settings=settings)
    try:
        with RssSampler() as rss:
            report = ws.ingest([corpus])
        seconds = time.perf_counter() - started
        return {"seconds": round(seconds, 1), "ingest_s": round(report.seconds, 1), "added": report.documents_added,
                "unchanged": report.documents_unchanged, "peak_rss_mb": round(rss.peak / 2**20),
                "per_stage_s": {k: round(v, 2) for k, v in report.stage_seconds.items()}}
    finally:
        ws.close()


def bench_big_file(cache_dir: Path, settings, megabytes: float = 30) -> dict:
    """One Markdown file of ``megabytes`` MB ingested in a fresh process."""
    root = Path(cache_dir) / f"sizes-file-{megabytes:g}mb"
    path = root / "corpus" / "notebook.md"
    if not path.exists():
        write_big_markdown(path, megabytes)
    out: dict[str, Any] = {"file_mb": round(path.stat().st_size / 2**20, 1)}
    out["ingest"] = _run(path.parent, root / "ws", settings, f"one {megabytes:g} MB file", keep=True)
    from ..record.store import RECORD_FILE, Store

    store = Store(root / "ws" / RECORD_FILE)
    try:
        out["co_mentioned_rows"] = store.comention_count()
        out["triples"] = store.count("triples")
        out["mentions"] = store.count("mentions")
    finally:
        store.close()
    return out


def bench_big_chat_log(cache_dir: Path, settings, megabytes: float = 30) -> dict:
    """One chat log of ``megabytes`` MB ingested in a fresh process: a chunk a message."""
    root = Path(cache_dir) / f"sizes-chat-{megabytes:g}mb"
    path = root / "corpus" / "channel.jsonl"
    if not path.exists():
        write_big_chat_log(path, megabytes)
    with open(path, "rb") as lines:
        messages = sum(1 for _ in lines)
    out: dict[str, Any] = {"file_mb": round(path.stat().st_size / 2**20, 1), "messages": messages}
    out["ingest"] = _run(path.parent, root / "ws", settings, f"one {megabytes:g} MB chat log", keep=True)
    return out
