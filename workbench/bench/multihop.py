"""The multi-hop retrieval benchmark: Recall@2 and Recall@5 of every retrieval mode, in one run.

A benchmark folder holds ``corpus.jsonl`` (``{"id", "title", "text"}`` passages) and
``queries.jsonl`` (``{"id", "question", "answer", "gold_ids"}``), as in ``../shared/bench``.
The passages are written once as a records file whose text is ``title + "\\n" + text`` (the
passage text the reference figures use; the loader would otherwise index the text alone),
ingested into a cached workspace, and every mode is run on every question.

Recall@k is the share of a question's gold passages in the top ``k`` passages, averaged over
questions, in percent. Hits are chunks: a passage split into several chunks counts once, at
its best rank (hits are mapped to passages and de-duplicated in rank order).

Examples
--------
>>> passage_of("passages.jsonl#musique-00006")
'musique-00006'
>>> recall_at(["p1", "p9", "p2"], ["p1", "p2"], 2)
0.5
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..model.jsonable import NOT_IN_JSON, to_json

if TYPE_CHECKING:
    from ..workspace.workspace import Workspace

__all__ = [
    "BASELINE_MODES",
    "read_jsonl",
    "BenchError",
    "BenchSet",
    "Question",
    "ModeScore",
    "MultihopReport",
    "load_bench",
    "available_modes",
    "default_cache_dir",
    "bench_workspace",
    "passage_of",
    "recall_at",
    "run_multihop",
    "score_mode",
]

#: BM25, dense and their Reciprocal Rank Fusion: always run, first.
BASELINE_MODES = ("keyword", "vector", "hybrid")
#: File name of the passages written for ingestion (its id prefixes every document id).
PASSAGES_FILE = "passages.jsonl"
#: Chunks fetched per question: more than 5 so that split passages still fill the top 5.
HITS_PER_QUESTION = 10


class BenchError(ValueError):
    """A benchmark folder or file that cannot be used; the message names the file and line."""


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    gold_ids: tuple[str, ...]
    answer: str = ""


@dataclass
class BenchSet:
    """A benchmark folder, read."""

    name: str
    corpus_path: Path
    passages: list[dict]
    """``{"id", "title", "text"}`` as in the file."""
    questions: list[Question]


@dataclass
class ModeScore:
    mode: str
    recall_at_2: float
    """Percent."""
    recall_at_5: float
    """Percent."""
    seconds: float
    """Wall time of all the mode's queries, after one untimed warm-up query."""
    modes_used: dict[str, int] = field(default_factory=dict)
    """How often each mode was actually used (a mode may fall back to another)."""


@dataclass
class MultihopReport:
    dataset: str
    questions: int
    passages: int
    results: dict[str, ModeScore]
    build_seconds: float = field(default=0.0, metadata=NOT_IN_JSON)

    def to_json(self) -> dict:
        """The issue's shape: ``{"dataset", "questions", "passages", "results": {MODE: {...}}}``, each
        mode with how often each mode was actually used (graphrag's fallbacks)."""
        return to_json(self, results={m: {"recall@2": round(s.recall_at_2, 1), "recall@5": round(s.recall_at_5, 1),
                                          "seconds": round(s.seconds, 2), "modes_used": dict(sorted(s.modes_used.items()))}
                                      for m, s in self.results.items()})


def read_jsonl(path: Path) -> list[dict]:
    """The JSON objects of a benchmark file, one a line; a clear BenchError names a bad line."""
    if not path.is_file():
        raise BenchError(f"{path}: not found; a benchmark folder holds corpus.jsonl and queries.jsonl")
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise BenchError(f"{path}: line {number}: invalid JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise BenchError(f"{path}: line {number}: expected a JSON object")
            rows.append(row)
    return rows


def load_bench(data_dir: str | Path, limit: int | None = None) -> BenchSet:
    """Read a benchmark folder; ``limit`` keeps the first N questions (the corpus stays whole).

    Raises
    ------
    BenchError
        For a missing file, bad JSON, a passage without id/text, or a gold id not in the corpus.
    """
    folder = Path(data_dir)
    corpus_path = folder / "corpus.jsonl"
    passages = read_jsonl(corpus_path)
    ids = set()
    for number, p in enumerate(passages, start=1):
        if not p.get("id") or not isinstance(p.get("text"), str):
            raise BenchError(f"{corpus_path}: line {number}: a passage needs 'id' and 'text'")
        ids.add(str(p["id"]))
    questions = []
    for number, q in enumerate(read_jsonl(folder / "queries.jsonl"), start=1):
        gold = tuple(str(g) for g in q.get("gold_ids") or ())
        if not q.get("question") or not gold:
            raise BenchError(f"{folder / 'queries.jsonl'}: line {number}: a query needs 'question' and 'gold_ids'")
        unknown = [g for g in gold if g not in ids]
        if unknown:
            raise BenchError(f"{folder / 'queries.jsonl'}: line {number}: gold ids not in the corpus: {', '.join(unknown)}")
        questions.append(Question(str(q.get("id") or number), str(q["question"]), gold, str(q.get("answer") or "")))
    if limit is not None:
        questions = questions[:limit]
    return BenchSet(folder.resolve().name, corpus_path, passages, questions)


def available_modes() -> list[str]:
    """Every registered retrieval mode, baselines first: new modes show up without edits here."""
    from ..retrieve import MODES

    names = list(MODES)
    return [m for m in BASELINE_MODES if m in names] + [m for m in names if m not in BASELINE_MODES]


def default_cache_dir(bench: BenchSet) -> Path:
    """``~/.cache/workbench/bench/<set>-<first 12 hex of the corpus file's SHA-256>``."""
    digest = hashlib.sha256(bench.corpus_path.read_bytes()).hexdigest()[:12]
    return Path.home() / ".cache" / "workbench" / "bench" / f"{bench.name}-{digest}"


def _write_passages(bench: BenchSet, path: Path) -> None:
    lines = []
    for p in bench.passages:
        title = str(p.get("title") or "").strip()
        text = f"{title}\n{p['text']}" if title else p["text"]
        lines.append(json.dumps({"id": str(p["id"]), "title": title or str(p["id"]), "text": text}, ensure_ascii=False))
    content = "\n".join(lines) + "\n"
    # An unchanged file keeps its documents' hashes, so a cached workspace ingests nothing.
    if not path.exists() or path.read_text(encoding="utf-8") != content:
        path.write_text(content, encoding="utf-8")


def bench_workspace(bench: BenchSet, workspace: str | Path | None = None, settings=None, embedder=None,
                    progress=None, on_ingest: Callable[[Any], None] | None = None):
    """Open (building or updating if needed) the workspace that holds ``bench``'s passages.

    Returns the :class:`~workbench.workspace.workspace.Workspace`. After one complete ingest the passages
    file's hash is recorded, and later calls open the workspace without ingesting (or locking).
    ``on_ingest`` is given the :class:`~workbench.workspace.ingest_pipeline.IngestReport` when this call ingested
    (its seconds are a first ingest's in a new workspace: every text embedded).
    """
    from ..embedding import LEGACY_NAME
    from ..workspace.ingest_pipeline import pipeline_fingerprint
    from ..workspace.workspace import Workspace

    folder = Path(workspace) if workspace is not None else default_cache_dir(bench)
    folder.mkdir(parents=True, exist_ok=True)
    corpus = folder / "corpus"
    corpus.mkdir(exist_ok=True)
    _write_passages(bench, corpus / PASSAGES_FILE)
    passages = corpus / PASSAGES_FILE
    ws = Workspace(folder / "ws", settings=settings, embedder=embedder)
    # A marker of the last complete ingest lets readers skip the write lock, so several bench
    # runs can share one cached workspace.
    marker = folder / "ingested.sha256"
    # The passages and the pipeline that extracted them: new extraction code re-ingests; so does
    # another embedder (its own vector space), named in the marker for all but torch MiniLM's.
    space = "" if ws.embedder.name == LEGACY_NAME else ws.embedder.name
    digest = hashlib.sha256(passages.read_bytes() + pipeline_fingerprint(ws.settings).encode()
                            + space.encode()).hexdigest()
    if not (marker.exists() and marker.read_text().strip() == digest
            and ws.store.count("documents") == len(bench.passages)):
        report = ws.ingest([passages], progress=progress)
        marker.write_text(digest + "\n")
        if on_ingest is not None:
            on_ingest(report)
    return ws


def passage_of(document_id: str) -> str:
    """The benchmark passage id of a stored document id ``<file id>#<record id>``."""
    return document_id.split("#", 1)[1] if "#" in document_id else document_id


def recall_at(ranked_passages: Sequence[str], gold: Sequence[str], k: int) -> float:
    """Share of ``gold`` among the first ``k`` distinct passages of ``ranked_passages``."""
    top = list(dict.fromkeys(ranked_passages))[:k]
    return sum(g in top for g in set(gold)) / len(set(gold))


def run_multihop(ws: Workspace, bench: BenchSet, modes: Sequence[str] | None = None,
                 retrieve: Callable[..., Any] | None = None,
                 progress: Callable[[str, int, int], None] | None = None) -> MultihopReport:
    """Run every mode (baselines included, first) on every question of ``bench``.

    Parameters
    ----------
    ws : the workspace from :func:`bench_workspace`.
    modes : modes to run besides the baselines; default every registered mode.
    retrieve : ``retrieve(ws, query, mode=..., k=...)``; default :func:`workbench.retrieve.retrieve`.
    """
    if retrieve is None:
        from ..retrieve import retrieve as default_retrieve
        retrieve = default_retrieve
    wanted = list(modes) if modes else available_modes()
    order = list(BASELINE_MODES) + [m for m in dict.fromkeys(wanted) if m not in BASELINE_MODES]
    results = {mode: score_mode(ws, bench, mode, retrieve, progress) for mode in order}
    return MultihopReport(bench.name, len(bench.questions), len(bench.passages), results)


def score_mode(ws: Workspace, bench: BenchSet, mode: str, retrieve: Callable[..., Any],
               progress: Callable[[str, int, int], None] | None = None, label: str | None = None) -> ModeScore:
    """Recall@2/@5 of one mode over every question of ``bench`` (timed after one untimed query)."""
    label = label or mode
    r2 = r5 = 0.0
    used: dict[str, int] = {}
    if bench.questions:
        # One untimed query first: model loading and index building are not per-query cost.
        retrieve(ws, bench.questions[0].question, mode=mode, k=HITS_PER_QUESTION)
    started = time.perf_counter()
    for number, q in enumerate(bench.questions, start=1):
        result = retrieve(ws, q.question, mode=mode, k=HITS_PER_QUESTION)
        ranked = [passage_of(h.document) for h in result.hits]
        r2 += recall_at(ranked, q.gold_ids, 2)
        r5 += recall_at(ranked, q.gold_ids, 5)
        used[result.mode_used] = used.get(result.mode_used, 0) + 1
        if progress:
            progress(label, number, len(bench.questions))
    n = max(len(bench.questions), 1)
    return ModeScore(label, 100 * r2 / n, 100 * r5 / n, time.perf_counter() - started, used)
