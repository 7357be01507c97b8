"""The stored summaries of a workspace: community reports and conversation episodes.

Both are derived from the record and kept in the ``summaries`` table of ``workspace.sqlite``
with their embeddings (a few hundred short texts: a brute-force cosine over them in numpy
costs microseconds, and keeping them beside the record means one transaction writes them, with
no second store to reconcile after a crash). :func:`sync_summaries` runs after every write step
(ingest, remove, repair, a canonicalization change), under the write lock: it detects the
communities again, keeps every report whose signature (members and their chunks) is unchanged,
builds and embeds the others, and replaces the table in one transaction with the version it
describes. A crash before that commit leaves the previous summaries and an older version mark.

Readers call :func:`current_summaries`: the stored summaries when they describe the current
version, else the same build done in memory (stored reports reused by signature), so a
read-only surface never writes. Past ``communities.sync_max_passages`` passages a write step
stores none (a build takes about a minute at 61k passages); the first reader to build them
stores them when the write lock is free, so later processes read them.

The vectors are the workspace embedder's: the version mark names the embedder (all but the
bundled MiniLM on torch, whose marks stay bare version numbers), so summaries stored with
another ``embedding.backend`` count as out of date and their vectors are never reused.
"""

from __future__ import annotations

import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..embedding import LEGACY_NAME, EmbeddingUnavailable
from ..model import CommunityReport, Episode
from .communities import REPORT_RULES, ReportOptions, build_reports, report_order
from .episodes import episodes_of

if TYPE_CHECKING:
    from .workspace_view import WorkspaceView

__all__ = ["COMMUNITY", "EPISODE", "SUMMARIES_VERSION", "Summaries", "current_episodes", "current_summaries", "store_summaries", "sync_summaries",
           "rank_by_similarity", "version_mark"]

COMMUNITY = "community"
EPISODE = "episode"
#: Meta key: the workspace version the stored summaries describe.
SUMMARIES_VERSION = "summaries_version"

_memo: "weakref.WeakKeyDictionary[object, Summaries]" = weakref.WeakKeyDictionary()
_memo_lock = threading.Lock()


@dataclass
class Summaries:
    """Community reports and episodes of one workspace version, with their embeddings."""

    version: int
    reports: list[CommunityReport]
    report_vectors: np.ndarray | None
    episodes: list[Episode]
    episode_vectors: np.ndarray | None
    built: int = 0
    """Reports built anew by the last build (0 when read from the store)."""
    kept: int = 0
    """Reports kept unchanged by the last build."""
    stored: bool = False
    """Whether these are the summaries stored in the workspace."""
    seconds: dict[str, float] = field(default_factory=dict)
    space: str = LEGACY_NAME
    """The name of the embedder whose vectors these are."""

    def report(self, report_id: str) -> CommunityReport:
        for report in self.reports:
            if report.id == report_id:
                return report
        raise KeyError(f"no community {report_id!r}; communities: {', '.join(r.id for r in self.reports) or 'none'}")


def version_mark(ws: WorkspaceView, version: int) -> str:
    """The version mark of summaries built at ``version`` with the workspace's embedder."""
    name = ws.embedder.name
    mark = f"{version}/rules {REPORT_RULES}"  # summaries made under earlier rules are made again
    return mark if name == LEGACY_NAME else f"{mark}@{name}"


def _stored_space(ws: WorkspaceView) -> str:
    """The name of the embedder whose vectors the stored summaries hold."""
    return (ws.store.meta(SUMMARIES_VERSION) or "").partition("@")[2] or LEGACY_NAME


def _stored(ws: WorkspaceView, kind: str):
    return ws.store.summaries(kind)


def _conversations(ws: WorkspaceView):
    ids = [d.id for d in ws.store.documents() if d.kind == "conversation"]
    by_doc: dict[str, list] = {i: [] for i in ids}
    for chunk in ws.store.chunks(ws.store.chunk_ids_of(ids)) if ids else []:
        by_doc[chunk.document_id].append(chunk)
    return sorted(by_doc.items())


def _vectors(ws: WorkspaceView, texts: list[str], cache: bool) -> np.ndarray | None:
    if not texts:
        return np.zeros((0, getattr(ws.embedder, "dimension", 0)), dtype=np.float32)
    try:
        if cache:
            from ..vectors.embedding_cache import embed_cached

            return embed_cached(texts, ws.store, ws.embedder)[0]
        return np.asarray(ws.embedder.embed(texts), dtype=np.float32)
    except EmbeddingUnavailable:
        return None


def _build(ws: WorkspaceView, version: int, cache: bool) -> Summaries:
    graph = ws.graph
    previous = {sig: CommunityReport.from_json(body) for _, sig, body, _ in _stored(ws, COMMUNITY)}
    # Another embedder's vectors are of no use: every report is embedded again (from the cache).
    same_space = _stored_space(ws) == ws.embedder.name
    old_vectors = {sig: vec for _, sig, _, vec in _stored(ws, COMMUNITY)} if same_space else {}
    build = build_reports(graph, ws.store.chunks, ReportOptions.from_settings(ws.settings.communities), previous)
    start = time.perf_counter()
    e = ws.settings.episodes
    episodes = episodes_of(_conversations(ws), graph, e.session_gap_minutes, e.max_entities)
    episode_seconds = time.perf_counter() - start
    start = time.perf_counter()
    # Kept reports keep their vectors (unless their title changed); only the new ones are embedded.
    now = {r.signature: r.text() for r in build.reports}
    old_vectors = {sig: vec for sig, vec in old_vectors.items() if sig in previous and now.get(sig) == previous[sig].text()}
    new = [r for r in build.reports if old_vectors.get(r.signature) is None]
    fresh = _vectors(ws, [r.text() for r in new], cache)
    vectors: dict[str, np.ndarray] = {sig: v for sig, v in old_vectors.items() if v is not None}
    if fresh is not None:
        vectors.update((r.signature, v) for r, v in zip(new, fresh))
    report_vectors = (np.stack([vectors[r.signature] for r in build.reports]) if build.reports else None) \
        if all(r.signature in vectors for r in build.reports) else None
    episode_vectors = _vectors(ws, [ep.summary() for ep in episodes], cache)
    seconds = {**build.seconds, "episodes": round(episode_seconds, 6), "embed": round(time.perf_counter() - start, 6)}
    return Summaries(version, build.reports, report_vectors, episodes, episode_vectors, build.built, build.kept,
                     False, seconds, ws.embedder.name)


def sync_summaries(ws: WorkspaceView) -> Summaries | None:
    """Rebuild and store the summaries when the workspace changed (call under the write lock).
    Past ``communities.sync_max_passages`` passages nothing is built here (None): readers build
    the summaries when they are first asked for."""
    version = ws.store.version
    if ws.store.count("chunks") > ws.settings.communities.sync_max_passages:
        return None
    if ws.store.meta(SUMMARIES_VERSION) == version_mark(ws, version):
        return current_summaries(ws)
    built = _build(ws, version, cache=True)
    store_summaries(ws, built)
    return built


def store_summaries(ws: WorkspaceView, built: Summaries) -> None:
    """Store ``built`` as the summaries of the version it describes, in one transaction (call
    under the write lock, with the record still at that version)."""
    rv, ev = built.report_vectors, built.episode_vectors
    ws.store.replace_summaries({
        COMMUNITY: [(r.id, r.signature, r.to_json(terms=True), None if rv is None else rv[i]) for i, r in enumerate(built.reports)],
        EPISODE: [(ep.id, ep.id, ep.to_json(), None if ev is None else ev[i]) for i, ep in enumerate(built.episodes)],
    }, SUMMARIES_VERSION, version_mark(ws, built.version))
    built.stored = True
    with _memo_lock:
        _memo[ws] = built


def current_summaries(ws: WorkspaceView) -> Summaries:
    """The summaries of the workspace's current version (stored, else built in memory)."""
    version = ws.store.version
    with _memo_lock:
        memo = _memo.get(ws)
    if memo is not None and memo.version == version and memo.space == ws.embedder.name:
        if not memo.stored:  # built while the write lock was busy: stored once it is free
            ws.save_derived(version, lambda: store_summaries(ws, memo))
        return memo
    if ws.store.meta(SUMMARIES_VERSION) == version_mark(ws, version):
        rows = _stored(ws, COMMUNITY)
        reports = [CommunityReport.from_json(body) for _, _, body, _ in rows]
        reports.sort(key=report_order)
        vecs = [vec for _, _, _, vec in rows]
        order = {r.id: i for i, r in enumerate(reports)}
        rv = None
        if rows and all(v is not None for v in vecs):
            rv = np.zeros((len(rows), len(vecs[0])), dtype=np.float32)
            for (rid, _, _, vec) in rows:
                rv[order[rid]] = vec
        erows = _stored(ws, EPISODE)
        episodes = sorted((Episode.from_json(body) for _, _, body, _ in erows), key=lambda e: (e.start or "", e.document))
        eorder = {e.id: i for i, e in enumerate(episodes)}
        ev = None
        if erows and all(vec is not None for *_, vec in erows):
            ev = np.zeros((len(erows), len(erows[0][3])), dtype=np.float32)
            for rid, _, _, vec in erows:
                ev[eorder[rid]] = vec
        found = Summaries(version, reports, rv, episodes, ev, 0, len(reports), True, space=ws.embedder.name)
    else:
        found = _build(ws, version, cache=False)
        # Past sync_max_passages no write step stores them: the first reader does, for the next process.
        ws.save_derived(version, lambda: store_summaries(ws, found))
    with _memo_lock:
        _memo[ws] = found
    return found


def current_episodes(ws: WorkspaceView) -> list[Episode]:
    """The episodes of the current version: the stored or already built summaries' when there
    are, else split from the conversation logs alone. Past ``communities.sync_max_passages`` no
    summaries are stored, and building them detects communities over the whole graph (minutes at
    61k passages), which the episodes never read."""
    version = ws.store.version
    with _memo_lock:
        memo = _memo.get(ws)
    if memo is not None and memo.version == version:
        return memo.episodes
    if ws.store.meta(SUMMARIES_VERSION) == version_mark(ws, version):
        return current_summaries(ws).episodes
    e = ws.settings.episodes
    return episodes_of(_conversations(ws), ws.graph, e.session_gap_minutes, e.max_entities)


def rank_by_similarity(vectors: np.ndarray | None, query: np.ndarray) -> list[tuple[int, float]]:
    """``(row, cosine)`` of every row, most similar first (rows and query are unit vectors)."""
    if vectors is None or len(vectors) == 0:
        return []
    norms = np.linalg.norm(vectors, axis=1) * (np.linalg.norm(query) or 1.0)
    scores = (vectors @ np.asarray(query, dtype=np.float32)) / np.where(norms == 0, 1.0, norms)
    return sorted(((i, float(s)) for i, s in enumerate(scores)), key=lambda item: (-item[1], item[0]))
