"""The stored summaries of a workspace: community reports and conversation episodes.

Both are derived from the record and kept in the ``summaries`` table of ``workspace.sqlite``
with their embeddings (a few hundred short texts: a brute-force cosine over them in numpy
costs microseconds, and keeping them beside the record means one transaction writes them, with
no second store to reconcile after a crash). With them is the partition their detection left
(:mod:`workbench.corpus.community_partition`), so the next build follows a write instead of
starting over: it starts detection from it (the communities no changed node falls in are kept
whole), keeps every report whose signature (members and their chunks) is unchanged and its
vector while its text is, and builds and embeds the others only. :func:`sync_summaries` runs
after every write step (ingest, remove, repair, a canonicalization change), under the write
lock, and replaces the table in one transaction with the version it describes. A crash before
that commit leaves the previous summaries and an older version mark.

Readers call :func:`current_summaries`: the stored summaries when they describe the current
version, else the same build done in memory from the last ones (the stored, or this process's
own), so a read-only surface never writes. Past ``communities.sync_max_passages`` passages a
write step stores none (a build from nothing takes about a minute at 61k passages); the first
reader to build them stores them when the write lock is free, so later processes read them.

A build that cannot follow the last one (none is stored, the settings or the embedder changed,
or a write changed a large share of the passages) starts over. A long-lived reader (the app,
the MCP server: :func:`rebuild_in_background`) is then given the last summaries at once, marked
with the record version they describe (:attr:`Summaries.version`, against
:attr:`Summaries.record_version`) while the new ones are built on a thread of their own.

The vectors are the workspace embedder's: the version mark names the embedder (all but the
bundled MiniLM on torch, whose marks stay bare version numbers), so summaries stored with
another ``embedding.backend`` count as out of date and their vectors are never reused.
"""

from __future__ import annotations

import dataclasses
import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..embedding import LEGACY_NAME, EmbeddingUnavailable
from ..model import CommunityReport, Episode, ThemesFrom
from .communities import detection_digest
from .community_partition import Partition
from .community_reports import REPORT_RULES, ReportOptions, build_reports, report_order
from .episodes import episodes_of

if TYPE_CHECKING:
    from .workspace_view import WorkspaceView

__all__ = ["COMMUNITY", "EPISODE", "PARTITION", "SUMMARIES_VERSION", "Summaries", "current_episodes",
           "current_summaries", "store_summaries", "sync_summaries", "rank_by_similarity", "version_mark",
           "rebuild_in_background", "wait_for_rebuild", "wait_for_store", "LARGE_CHANGE"]

COMMUNITY = "community"
EPISODE = "episode"
#: The summaries' kind holding the partition of their detection (one row, signed with their version mark).
PARTITION = "partition"
#: Meta key: the workspace version the stored summaries describe.
SUMMARIES_VERSION = "summaries_version"
#: Share of the passages a write may add or remove and the summaries still follow it; past it
#: they are built anew (in the background for a long-lived reader).
LARGE_CHANGE = 0.2

_memo: "weakref.WeakKeyDictionary[object, Summaries]" = weakref.WeakKeyDictionary()
_memo_lock = threading.Lock()
#: Workspaces whose builds from nothing run on a thread while the last summaries are shown.
_background: "weakref.WeakSet[object]" = weakref.WeakSet()
_rebuilds: "weakref.WeakKeyDictionary[object, threading.Thread]" = weakref.WeakKeyDictionary()
#: The thread storing what a long-lived reader built (its answer does not wait; the process does, at exit).
_storing: "weakref.WeakKeyDictionary[object, threading.Thread]" = weakref.WeakKeyDictionary()
#: The version a background build failed for: the next reader builds it in its own call (and meets the error).
_failed: "weakref.WeakKeyDictionary[object, int]" = weakref.WeakKeyDictionary()


@dataclass
class Summaries:
    """Community reports and episodes of one workspace version, with their embeddings."""

    version: int
    """The record version they describe."""
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
    partition: Partition | None = field(default=None, repr=False)
    """Where their detection left every node (what the next build starts from)."""
    record_version: int | None = None
    """The record's version when they were asked for, if newer than :attr:`version` (else None)."""
    rebuilding: bool = False
    """Whether summaries of :attr:`record_version` are being built in the background."""
    changed: int | None = None
    """Nodes of the community graph the last build found new or changed (None: it started over)."""
    bodies: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    """Stored JSON of reports by signature, so a kept report is not written out again."""

    @property
    def themes_from(self) -> ThemesFrom:
        """The record version these describe, against the record's (what every surface shows)."""
        record = self.version if self.record_version is None else self.record_version
        return ThemesFrom(self.version, record, self.rebuilding)

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


def _mark_version(mark: str | None) -> int | None:
    """The record version a version mark names (None for none, or an unreadable one)."""
    try:
        return int((mark or "").split("/")[0].split("@")[0])
    except ValueError:
        return None


def _stored_space(ws: WorkspaceView) -> str:
    """The name of the embedder whose vectors the stored summaries hold."""
    return (ws.store.meta(SUMMARIES_VERSION) or "").partition("@")[2] or LEGACY_NAME


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


def _read_stored(ws: WorkspaceView) -> Summaries | None:
    """The stored summaries, whatever version they describe (None when none are stored); their
    partition only when it was stored with them."""
    mark = ws.store.meta(SUMMARIES_VERSION)
    version = _mark_version(mark)
    rows = ws.store.summaries(COMMUNITY)
    if version is None:
        return None
    reports = [CommunityReport.from_json(body) for _, _, body, _ in rows]
    bodies = {r.signature: body for r, (_, _, body, _) in zip(reports, rows)}
    vectors = {r.id: vec for r, (*_, vec) in zip(reports, rows) if vec is not None}
    reports.sort(key=report_order)
    rv = np.stack([vectors[r.id] for r in reports]).astype(np.float32) \
        if reports and len(vectors) == len(reports) else None
    erows = ws.store.summaries(EPISODE)
    episodes = sorted((Episode.from_json(body) for _, _, body, _ in erows), key=lambda e: (e.start or "", e.document))
    evectors = {body["id"]: vec for _, _, body, vec in erows if vec is not None}
    ev = np.stack([evectors[e.id] for e in episodes]).astype(np.float32) \
        if erows and len(evectors) == len(erows) else None
    partition = next((Partition.from_json(body) for _, sig, body, _ in ws.store.summaries(PARTITION) if sig == mark),
                     None)
    return Summaries(version, reports, rv, episodes, ev, 0, len(reports), True, space=_stored_space(ws),
                     partition=partition, bodies=bodies)


def _last(ws: WorkspaceView) -> Summaries | None:
    """The summaries a build follows: this process's last ones, else the stored ones."""
    with _memo_lock:
        memo = _memo.get(ws)
    return memo if memo is not None else _read_stored(ws)


def _follows(ws: WorkspaceView, last: Summaries | None) -> bool:
    """Whether a build can follow ``last`` (else it starts over): they hold a partition made under
    the settings of now, their vectors are of the workspace's embedder, and the passages differ in
    a small share."""
    if last is None or last.partition is None or last.space != ws.embedder.name:
        return False
    graph = ws.graph
    options = ReportOptions.from_settings(ws.settings.communities)
    if last.partition.digest != detection_digest(graph, **options.detection()):
        return False
    before = {n[1] for n in last.partition.names if isinstance(n, tuple) and n[0] == "p"}
    now = graph.passages.entities_of
    moved = len(before.symmetric_difference(now))
    return moved <= LARGE_CHANGE * max(len(before), len(now), 1)


def _load_model(ws: WorkspaceView) -> None:
    try:
        ws.embedder.embed(["warm-up"])
    except Exception:  # noqa: BLE001 - the build's own embedding meets and reports the same failure
        pass


def _build(ws: WorkspaceView, version: int, cache: bool, last: Summaries | None = None,
           follows: bool = True) -> Summaries:
    """The summaries of ``version``, given ``last`` ones: their reports kept by signature and their
    vectors by text, and, when the build ``follows`` them, detection started from their partition."""
    graph = ws.graph
    previous = {r.signature: r for r in last.reports} if last is not None else {}
    # Another embedder's vectors are of no use: every report is embedded again (from the cache).
    old_vectors: dict[str, np.ndarray] = {}
    if last is not None and last.space == ws.embedder.name and last.report_vectors is not None:
        old_vectors = {r.signature: v for r, v in zip(last.reports, last.report_vectors)}
    options = ReportOptions.from_settings(ws.settings.communities)
    # The model loads while the communities are found (a fresh process following a write embeds a few).
    loading = threading.Thread(target=_load_model, args=(ws,), name="load-model", daemon=True)
    loading.start()
    try:
        build = build_reports(graph, ws.store.chunks, options, previous,
                              last.partition if last is not None and follows else None)
    finally:
        loading.join()  # a process must not exit while a native library is loading in it
    start = time.perf_counter()
    e = ws.settings.episodes
    episodes = episodes_of(_conversations(ws), graph, e.session_gap_minutes, e.max_entities)
    episode_seconds = time.perf_counter() - start
    start = time.perf_counter()
    # Kept reports keep their vectors (unless their title changed); only the new ones are embedded.
    now = {r.signature: r.text() for r in build.reports}
    old_vectors = {sig: vec for sig, vec in old_vectors.items() if now.get(sig) == previous[sig].text()}
    new = [r for r in build.reports if old_vectors.get(r.signature) is None]
    fresh = _vectors(ws, [r.text() for r in new], cache)
    vectors: dict[str, np.ndarray] = dict(old_vectors)
    if fresh is not None:
        vectors.update((r.signature, v) for r, v in zip(new, fresh))
    report_vectors = (np.stack([vectors[r.signature] for r in build.reports]) if build.reports else None) \
        if all(r.signature in vectors for r in build.reports) else None
    old_episodes = {ep.summary(): v for ep, v in zip(last.episodes, last.episode_vectors)} \
        if last is not None and last.space == ws.embedder.name and last.episode_vectors is not None else {}
    episode_vectors = _episode_vectors(ws, episodes, old_episodes, cache)
    seconds = {**build.seconds, "episodes": round(episode_seconds, 6), "embed": round(time.perf_counter() - start, 6),
               "embedded": len(new)}
    bodies = last.bodies if last is not None else {}
    return Summaries(version, build.reports, report_vectors, episodes, episode_vectors, build.built, build.kept,
                     False, seconds, ws.embedder.name, partition=build.partition, changed=build.changed,
                     bodies={r.signature: bodies[r.signature] for r in build.reports if r.signature in bodies})


def _episode_vectors(ws: WorkspaceView, episodes: list[Episode], known: dict[str, np.ndarray],
                     cache: bool) -> np.ndarray | None:
    """The episodes' vectors, those whose summary is unchanged taken from ``known``."""
    texts = [ep.summary() for ep in episodes]
    missing = sorted({t for t in texts if t not in known})
    fresh = _vectors(ws, missing, cache) if missing else None
    if missing and fresh is None:
        return None
    found = {**known, **dict(zip(missing, fresh if fresh is not None else []))}
    return np.stack([found[t] for t in texts]).astype(np.float32) if texts else _vectors(ws, [], cache)


def sync_summaries(ws: WorkspaceView) -> Summaries | None:
    """Rebuild and store the summaries when the workspace changed (call under the write lock).
    Past ``communities.sync_max_passages`` nothing is built here (None): readers build the
    summaries when they are first asked for, following the last ones."""
    version = ws.store.version
    if ws.store.count("chunks") > ws.settings.communities.sync_max_passages:
        return None
    if ws.store.meta(SUMMARIES_VERSION) == version_mark(ws, version):
        return current_summaries(ws)
    last = _last(ws)
    built = _build(ws, version, cache=True, last=last, follows=_follows(ws, last))
    store_summaries(ws, built)
    return built


def _report_body(report: CommunityReport, bodies: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The stored JSON of a report: a kept one's stored JSON with its new title and key phrases."""
    body = bodies.get(report.signature)
    if body is None:
        return report.to_json(terms=True)
    return {**body, "title": report.title, "key_phrases": [list(p) for p in report.key_phrases],
            "parent": report.parent}


def store_summaries(ws: WorkspaceView, built: Summaries) -> None:
    """Store ``built`` as the summaries of the version it describes, in one transaction (call
    under the write lock, with the record still at that version)."""
    rv, ev = built.report_vectors, built.episode_vectors
    mark = version_mark(ws, built.version)
    bodies = {r.signature: _report_body(r, built.bodies) for r in built.reports}
    rows: dict[str, Sequence[tuple[str, str, dict, np.ndarray | None]]] = {
        COMMUNITY: [(r.id, r.signature, bodies[r.signature], None if rv is None else rv[i])
                    for i, r in enumerate(built.reports)],
        EPISODE: [(ep.id, ep.id, ep.to_json(), None if ev is None else ev[i]) for i, ep in enumerate(built.episodes)],
        PARTITION: [] if built.partition is None else [(PARTITION, mark, built.partition.to_json(), None)],
    }
    ws.store.replace_summaries(rows, SUMMARIES_VERSION, mark)
    built.stored = True
    built.bodies = bodies
    with _memo_lock:
        _memo[ws] = built


def rebuild_in_background(ws: WorkspaceView) -> None:
    """Have ``ws`` (a long-lived reader's: the app, the MCP server) build summaries that cannot
    follow the last ones on a thread, showing the last ones meanwhile (:attr:`Summaries.rebuilding`)."""
    _background.add(ws)


def wait_for_store(ws: WorkspaceView, timeout: float | None = None) -> bool:
    """Wait for the summaries a reader of ``ws`` built to be stored (if they are being stored);
    True when no store runs any more."""
    with _memo_lock:
        thread = _storing.get(ws)
    if thread is not None:
        thread.join(timeout)
    return thread is None or not thread.is_alive()


def wait_for_rebuild(ws: WorkspaceView, timeout: float | None = None) -> bool:
    """Wait for the background build of ``ws`` (if one runs); True when none runs any more."""
    with _memo_lock:
        thread = _rebuilds.get(ws)
    if thread is not None:
        thread.join(timeout)
    return thread is None or not thread.is_alive()


def _rebuild(ws: WorkspaceView, version: int, last: Summaries) -> None:
    """Build the summaries of ``version`` without following ``last`` (their unchanged reports are
    kept) and keep them (stored when the lock is free)."""
    try:
        built = _build(ws, version, cache=False, last=last, follows=False)
    except Exception:  # noqa: BLE001 - the next reader builds them in its own call, which says what failed
        with _memo_lock:
            _failed[ws] = version
        return
    with _memo_lock:
        memo = _memo.get(ws)
        if memo is None or memo.version <= version:
            _memo[ws] = built
    ws.save_derived(version, lambda: store_summaries(ws, built))


def _shown_while_rebuilding(ws: WorkspaceView, last: Summaries, version: int) -> Summaries:
    """``last`` as shown while the summaries of ``version`` are built on a thread (started here)."""
    with _memo_lock:
        thread = _rebuilds.get(ws)
        if thread is None or not thread.is_alive():
            thread = threading.Thread(target=_rebuild, args=(ws, version, last), name="rebuild-summaries",
                                      daemon=True)
            _rebuilds[ws] = thread
            thread.start()
    vectors = last.report_vectors if last.space == ws.embedder.name else None  # another space's are no use
    return dataclasses.replace(last, report_vectors=vectors, record_version=version, rebuilding=True)


def current_summaries(ws: WorkspaceView) -> Summaries:
    """The summaries of the workspace's current version: stored, else built in memory following
    the last ones; for a reader of :func:`rebuild_in_background`, the last ones while a build that
    must start over runs on a thread."""
    version = ws.store.version
    with _memo_lock:
        memo = _memo.get(ws)
    if memo is not None and memo.version == version and memo.space == ws.embedder.name:
        if not memo.stored and wait_for_store(ws):  # built while the write lock was busy: stored once it is free
            ws.save_derived(version, lambda: store_summaries(ws, memo))
        return memo
    mark = ws.store.meta(SUMMARIES_VERSION)
    stored_version = _mark_version(mark)
    # This process's last build, unless another process stored newer ones since.
    last = memo if memo is not None and (stored_version is None or stored_version <= memo.version) \
        else _read_stored(ws)
    if last is not None and last.stored and mark == version_mark(ws, version):
        found = last
    else:
        follows = _follows(ws, last)
        with _memo_lock:
            failed = _failed.pop(ws, None) == version
        if not follows and last is not None and last.reports and ws in _background and not failed:
            return _shown_while_rebuilding(ws, last, version)
        found = _build(ws, version, cache=False, last=last, follows=follows)
        # Past sync_max_passages no write step stores them: the first reader does, for the next
        # process; a long-lived one on a thread of its own, so its answer does not wait.
        if ws in _background:
            storing = threading.Thread(target=ws.save_derived, args=(version, lambda: store_summaries(ws, found)),
                                       name="store-summaries")
            with _memo_lock:
                _storing[ws] = storing
            storing.start()
        else:
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
