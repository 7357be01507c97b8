"""Communities following writes: the community reports from scratch, then after one note is
added, edited and removed, each timed to the first answer of ``communities``.

On a copy of a benchmark workspace (the cache is never written), whose write steps build no
summaries (as past ``communities.sync_max_passages``): the summaries are dropped and built from
scratch by the workspace that writes (the baseline, its model loaded first); a
long-lived reader (a read-only workspace, as the app or the MCP server hold one) then answers
after each write, following its last summaries, and a fresh process (``communities --json``,
interpreter and model start included) follows the stored ones. Beside each figure, what a
detection from scratch of the same graph gives: its modularity against the followed partition's,
and how many themes it would have kept of the previous scratch detection's (Louvain started
afresh moves most of them for one note).
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .app_perf import timed

if TYPE_CHECKING:
    from ..settings import Settings
    from ..workspace.workspace import Workspace

__all__ = ["bench_community_follow", "note_texts"]


def note_texts(ws: Workspace) -> tuple[str, str]:
    """A note that restates the opening sentences of two documents (it ties their themes), and the
    same note edited to name a third document's instead of the second's."""
    from ..text.sentences import split_sentences

    documents = ws.documents()
    picked = [documents[i * len(documents) // 3] for i in range(3)] if len(documents) >= 3 else documents * 3
    openings = []
    for document in picked:
        chunk = ws.chunks(ws.store.chunk_ids_of([document.id])[:1])[0]
        openings.append(" ".join(split_sentences(chunk.text)[:2]))
    head = "# Reading notes\n\n"
    return head + f"{openings[0]}\n\n{openings[1]}\n", head + f"{openings[0]}\n\n{openings[2]}\n"


def _themes(reports) -> set[frozenset[str]]:
    return {frozenset(r.members) for r in reports if r.level == 0}


def _against_scratch(ws: Workspace, followed) -> dict[str, Any]:
    """A detection from scratch of the graph ``followed`` describes: its level-0 modularity
    beside the followed partition's, and its themes (for the next step's comparison)."""
    from ..corpus.communities import community_graph, detect, modularity
    from ..corpus.community_reports import ReportOptions

    graph = ws.graph
    options = ReportOptions.from_settings(ws.settings.communities)
    every = sorted(graph.passages.entities_of)
    texts = {c.id: c.text for c in ws.store.chunks(every)} if options.words_per_passage > 0 else {}
    started = time.perf_counter()
    scratch = detect(graph, resolution=options.resolution, seed=options.seed, min_size=options.min_size,
                     relation_weight=options.relation_weight, levels=options.levels, texts=texts,
                     words_per_passage=options.words_per_passage)
    detect_s = time.perf_counter() - started
    adjacency, names = community_graph(graph, options.relation_weight, texts, options.words_per_passage)
    out: dict[str, Any] = {"scratch_detect_s": round(detect_s, 2),
                           "modularity_scratch": round(modularity(adjacency, scratch.partition.labels[0],
                                                                  options.resolution), 4)}
    if followed.partition is not None and followed.partition.names == names:
        out["modularity_followed"] = round(modularity(adjacency, followed.partition.labels[0], options.resolution), 4)
    out["themes"] = {frozenset(c.members) for c in scratch.communities if c.level == 0}
    return out


def bench_community_follow(workspace_path: Path, settings: Settings, work_dir: Path,
                           fresh_process: bool = True) -> dict[str, Any]:
    """The figures of the module docstring, on a copy of ``workspace_path`` made in ``work_dir``."""
    from ..corpus.summaries import wait_for_store
    from ..workspace.workspace import Workspace

    # No write step builds them, as past communities.sync_max_passages: the reader follows each write.
    settings = settings.model_copy(update={"communities": settings.communities.model_copy(
        update={"sync_max_passages": 0})})
    shutil.rmtree(work_dir, ignore_errors=True)
    copy = work_dir / "ws"
    shutil.copytree(workspace_path, copy)
    notes = work_dir / "notes"
    notes.mkdir()
    note = notes / "reading-notes.md"
    writer = Workspace(copy, settings=settings, create=False)
    reader: Workspace | None = None
    try:
        writer.embedder.embed(["warm up"])  # the model is loaded in every timing that follows
        writer.drop_summaries()
        started = time.perf_counter()
        graph_s = (writer.graph, time.perf_counter() - started)[1]
        started = time.perf_counter()
        scratch = writer.summaries()
        scratch_s = time.perf_counter() - started
        wait_for_store(writer)  # stored on a thread once answered: the reader starts from them
        added, edited = note_texts(writer)
        reader = Workspace(copy, settings=settings, embedder=writer.embedder, create=False, read_only=True)
        reader.summaries()  # reads the stored ones: the reader's last summaries
        baseline = _against_scratch(writer, scratch)
        out: dict[str, Any] = {
            "passages": writer.store.count("chunks"), "reports": len(scratch.reports),
            "themes": sum(1 for r in scratch.reports if r.level == 0), "graph_load_s": round(graph_s, 2),
            "scratch_s": round(scratch_s, 2), "scratch_seconds": scratch.seconds,
            "modularity_scratch": baseline["modularity_scratch"], "steps": []}
        previous_scratch, previous_themes = baseline["themes"], _themes(scratch.reports)

        def write(step: str) -> None:
            if step == "removed":
                writer.remove(note)
            else:
                note.write_text(added if step == "added" else edited, encoding="utf-8")
                writer.ingest([notes])

        for step in ("added", "edited", "removed"):
            started = time.perf_counter()
            write(step)
            write_s = time.perf_counter() - started
            started = time.perf_counter()
            reader.graph  # noqa: B018 - the graph the write made, loaded before the communities are timed
            reader_graph_s = time.perf_counter() - started
            started = time.perf_counter()
            followed = reader.summaries()
            follow_s = time.perf_counter() - started
            row: dict[str, Any] = {
                "step": step, "write_s": round(write_s, 2), "graph_load_s": round(reader_graph_s, 2),
                "seconds": round(follow_s, 2), "vs_scratch": round(follow_s / scratch_s, 4) if scratch_s else None,
                "built": followed.built, "kept": followed.kept, "embedded": followed.seconds.get("embedded"),
                "changed_nodes": followed.changed, "reports": len(followed.reports),
                "stage_s": {k: round(v, 3) for k, v in followed.seconds.items() if k != "embedded"},
                "themes_kept": len(_themes(followed.reports) & previous_themes)}
            if fresh_process:
                argv = [sys.executable, "-m", "workbench", "--workspace", str(copy), "communities", "--json"]
                fresh_s, printed = timed(argv, timeout=1800)
                listed = json.loads(printed)
                row["fresh_process_s"] = round(fresh_s, 2)
                row["fresh_process_built"] = listed.get("built")
                row["fresh_process_same"] = sorted(c["id"] for c in listed["communities"]) == \
                    sorted(r.id for r in followed.reports)
            against = _against_scratch(writer, followed)
            row["modularity_followed"] = against.get("modularity_followed")
            row["modularity_scratch"] = against["modularity_scratch"]
            row["scratch_themes_kept"] = len(against["themes"] & previous_scratch)
            row["themes"] = len(_themes(followed.reports))
            previous_scratch, previous_themes = against["themes"], _themes(followed.reports)
            out["steps"].append(row)
        return out
    finally:
        if reader is not None:
            reader.close()
        writer.close()
