"""Communities of the one context graph, in levels (themes, sub-themes).

Detection runs on the graph the graphrag walk sees (:meth:`ContextGraph.pagerank_index`):
entities and passages, joined by cited relations (``relation_weight`` per stating chunk),
co-mentions (1 per chunk), synonym edges (1), passage-entity links (1, or ``relation_weight``
where the passage states a relation of the entity) and title links (the layer's
``title_link_weight``). Dates and names too common to link passages are left out: they would
join every theme into one. A community is its entities and the passages that fall with them.
Their reports are written by :mod:`workbench.corpus.community_reports`.

Louvain (scikit-network's, compiled, BSD-licensed; seeded) runs on each connected component.
The nodes are numbered 0..n-1 in sorted order (entity keys, then chunk ids, then words) and
each pair's weights are summed in sorted order, so neither ``PYTHONHASHSEED`` nor the order of
files and edges can change the result. Each theme with enough entities is split again the same
way into sub-themes (``levels``), as GraphRAG's hierarchical Leiden does. networkx's Louvain,
used before, did not finish in 25 minutes on the 583k nodes of a 61k-passage corpus, where this
one takes seconds (docs/scaling.md, "Bounds at scale").

After a write, detection starts from the previous one's :class:`~workbench.corpus.community_partition.Partition`
(:func:`detect` with ``previous``): every part no changed node falls in stays whole and is one
node of the graph Louvain runs on, so the communities a write did not touch are kept as they
were (two of them are never merged by it alone), and only the changed nodes and the parts they
opened are placed again, with the rest of the graph around them.

Examples
--------
>>> from workbench.model import Edge, Entity
>>> from workbench.context_graph.graph import ContextGraph
>>> graph = ContextGraph(
...     [Entity("a", "A"), Entity("b", "B"), Entity("c", "C"), Entity("x", "X"), Entity("y", "Y"), Entity("z", "Z")],
...     [Edge("a", "uses", "b", chunk_ids=("c1",)), Edge("b", "uses", "c", chunk_ids=("c1",)),
...      Edge("a", "uses", "c", chunk_ids=("c2",)), Edge("x", "uses", "y", chunk_ids=("c3",)),
...      Edge("y", "uses", "z", chunk_ids=("c3",)), Edge("c", "uses", "x", chunk_ids=("c4",))])
>>> [sorted(c.members) for c in detect_communities(graph, seed=1, min_size=2)]
[['a', 'b', 'c'], ['x', 'y', 'z']]
>>> first = detect(graph, seed=1, min_size=2)
>>> again = detect(graph, seed=1, min_size=2, previous=first.partition)
>>> again.communities == first.communities, again.changed
(True, 0)
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..context_graph.graph import COMENTION_RELATION, ContextGraph
from ..settings import setting_default
from .community_partition import Block, Changes, Partition, node_fingerprints
from .keyphrases import content_words

if TYPE_CHECKING:  # imported where used: the CLI reaches this module for every command
    from scipy import sparse

__all__ = ["EXCLUDED_TYPES", "Community", "Detection", "community_graph", "detect", "detection_digest", "detect_communities", "louvain", "modularity",
           "region_louvain", "passage_words", "report_id"]

#: Left out of community detection: a date links unrelated themes.
EXCLUDED_TYPES = frozenset({"date"})
#: The rules detection runs by: a partition made under others is not started from.
DETECTION_RULES = 1
#: Louvain's tolerance (scikit-network's default) for a graph whose every node starts alone.
_TOLERANCE = 1e-3


@dataclass(frozen=True)
class Community:
    """A group of entities and the passages that fall with them, at one level."""

    members: frozenset[str]
    """Entity keys."""
    chunks: frozenset[str]
    """Chunk ids of its passages."""
    level: int = 0
    """0 for a theme, 1 for a sub-theme of one, and so on."""
    parent: frozenset[str] | None = None
    """The members of the community it splits, for a sub-theme."""
    parent_id: str | None = None
    """``report_id(parent)``, hashed once for all the sub-themes of a theme (30k members at 61k passages)."""

    def __post_init__(self) -> None:
        if self.parent is not None and self.parent_id is None:
            object.__setattr__(self, "parent_id", report_id(self.parent))


#: Each passage's content words by (id, hash of its text), kept for the passages of the last detection
#: in this process: the next one, after a write, reads the words of the few passages it changed.
_words_memo: dict[tuple[str, int], tuple[str, ...]] = {}


def _content_words(texts: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """:func:`~workbench.corpus.keyphrases.content_words` of each text, by its key in sorted order."""
    global _words_memo
    memo, kept = _words_memo, {}
    for key in sorted(texts):
        text = texts[key]
        at = (key, hash(text))
        words = memo.get(at)
        kept[at] = words if words is not None else tuple(content_words(text))
    _words_memo = kept
    return {key: words for (key, _), words in kept.items()}


def passage_words(texts: Mapping[str, str], per_passage: int = 20, max_share: float = 0.25) -> dict[str, list[str]]:
    """Each passage's ``per_passage`` most distinctive words (count x log(passages / passages with
    the word)), among the words of at least two passages and at most ``max_share`` of them.

    Examples
    --------
    >>> passage_words({"a": "export schedule moved", "b": "export schedule kept", "c": "budget kept"}, 5, 0.7)
    {'a': ['export', 'schedule'], 'b': ['export', 'kept', 'schedule'], 'c': ['kept']}
    """
    counts = {cid: Counter(words) for cid, words in _content_words(texts).items()}
    spread: Counter[str] = Counter(w for c in counts.values() for w in c)
    n = len(counts)
    found = {}
    for cid, c in counts.items():
        scored = sorted(((-tf * math.log(n / spread[w]), w) for w, tf in c.items()
                         if 2 <= spread[w] <= max_share * n), key=lambda x: (x[0], x[1]))
        found[cid] = [w for _, w in scored[:per_passage]]
    return found


def community_graph(graph: ContextGraph, relation_weight: float = setting_default("communities.relation_weight"),
                    texts: Mapping[str, str] | None = None,
                    words_per_passage: int = setting_default("communities.words_per_passage"),
                    word_share: float = 0.25) -> tuple[sparse.csr_matrix, list]:
    """The undirected weighted graph communities are detected on, as a symmetric adjacency
    matrix, and its node names.

    Node ``i`` is ``names[i]``: an entity key, ``("p", chunk id)`` for a passage or ``("w", word)``
    for a word that ``texts`` (chunk id -> text) gives its passages (:func:`passage_words`).
    A passage's link to an entity or a word weighs ``1 / sqrt(passages it links)``, so a name or
    word written everywhere (a team lead's name) ties themes together less than a specific one.
    Nodes are numbered in sorted order and the weights of a pair summed in sorted order (see the
    module docstring).
    """
    layer = graph.passages
    common = layer.common
    keys = sorted(e.key for e in graph.entities() if e.type not in EXCLUDED_TYPES and e.key not in common)
    chunk_ids = sorted(layer.entities_of)
    words = passage_words({c: texts[c] for c in chunk_ids if c in texts}, words_per_passage, word_share) \
        if texts and words_per_passage > 0 else {}
    vocabulary = sorted({w for ws in words.values() for w in ws})
    names: list = [*keys, *(("p", cid) for cid in chunk_ids), *(("w", w) for w in vocabulary)]
    key_at = {key: i for i, key in enumerate(keys)}
    passage_at = {cid: len(keys) + i for i, cid in enumerate(chunk_ids)}
    word_at = {w: len(keys) + len(chunk_ids) + i for i, w in enumerate(vocabulary)}
    rows: list[int] = []
    cols: list[int] = []
    weights: list[float] = []

    def add(a: int | None, b: int | None, w: float) -> None:
        if a is not None and b is not None and a != b and w > 0:
            rows.append(a)
            cols.append(b)
            weights.append(w)

    stated: set[tuple[str, str]] = set()
    for edge in graph.edges(include_comention=True):
        scale = 1.0
        if edge.relation != COMENTION_RELATION:
            scale = relation_weight
            stated.update((cid, end) for cid in edge.chunk_ids for end in (edge.source, edge.target))
        add(key_at.get(edge.source), key_at.get(edge.target), scale * edge.weight)
    for a, b, _ in layer.synonyms:
        add(key_at.get(a), key_at.get(b), 1.0)
    chunks_of = layer.chunks_of
    for cid in chunk_ids:
        at = passage_at[cid]
        for key in layer.entities_of[cid]:
            spread = len(chunks_of.get(key, ())) or 1
            add(at, key_at.get(key), (relation_weight if (cid, key) in stated else 1.0) / math.sqrt(spread))
    for cid, target in layer.title_links:
        add(passage_at.get(cid), passage_at.get(target), layer.title_link_weight)
    spread_of = Counter(w for ws in words.values() for w in ws)
    for cid, found in words.items():
        for w in found:
            add(passage_at[cid], word_at[w], 1.0 / math.sqrt(spread_of[w]))
    return _symmetric(len(names), np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64),
                      np.array(weights, dtype=np.float64)), names


def _symmetric(n: int, rows: np.ndarray, cols: np.ndarray, weights: np.ndarray) -> sparse.csr_matrix:
    """The n x n symmetric matrix of the undirected weighted pairs, each pair's weights summed
    in sorted order, so the order the pairs came in cannot change a bit of the result."""
    from scipy import sparse

    low, high = np.minimum(rows, cols), np.maximum(rows, cols)
    order = np.lexsort((weights, high, low))
    low, high, weights = low[order], high[order], weights[order]
    if len(low):
        starts = np.flatnonzero(np.r_[True, (np.diff(low) != 0) | (np.diff(high) != 0)])
        low, high, weights = low[starts], high[starts], np.add.reduceat(weights, starts)
    upper = sparse.csr_matrix((weights, (low, high)), shape=(n, n))
    return (upper + upper.T).tocsr()


def louvain(adjacency: sparse.csr_matrix, nodes: Iterable[int], resolution: float, seed: int) -> list[list[int]]:
    """Louvain (scikit-network's, compiled) on the subgraph of integer ``nodes``; parts sorted.

    The nodes are taken in sorted order and visited in the order ``seed`` shuffles them, so
    the same subgraph and seed always give the same parts.

    Examples
    --------
    >>> from scipy import sparse
    >>> ring = [(0, 1), (1, 2), (0, 2), (2, 3), (3, 4), (4, 5), (3, 5), (5, 6)]
    >>> a = _symmetric(7, *map(np.array, zip(*ring)), np.ones(len(ring)))
    >>> louvain(a, range(7), 1.0, seed=7)
    [[0, 1, 2], [3, 4, 5, 6]]
    """
    inside = np.array(sorted(nodes), dtype=np.int64)
    sub = adjacency[inside][:, inside]
    if sub.nnz == 0:
        return [[int(n)] for n in inside]
    from sknetwork.clustering import Louvain

    labels = Louvain(resolution=resolution, modularity="newman", shuffle_nodes=True, random_state=seed,
                     return_probs=False, return_aggregate=False).fit_predict(sub)
    return _groups(labels, inside)


def region_louvain(adjacency: sparse.csr_matrix, scope: np.ndarray, region: np.ndarray,
                   blocks: Sequence[np.ndarray], resolution: float,
                   seed: int) -> tuple[list[list[int]], list[np.ndarray]]:
    """Louvain on the subgraph of ``scope`` with only the nodes of ``region`` free to move.

    The rest of the scope is held where it is: it is collapsed into one node that carries its
    weight, so each region node keeps its degree in the scope and the modularity is the
    scope's, as if Louvain had run on the whole scope and left the rest as it was. The nodes of
    a block stay together (each block is one node of the graph Louvain runs on); every other
    region node starts alone. The tolerance (what a pass must gain for another) is scaled by the
    region's share of the scope's weight.

    Returns the parts of the region, and the units (a block, or a node alone) that would rather
    join the rest of the scope than any part of the region.

    Examples
    --------
    >>> ring = [(0, 1), (1, 2), (0, 2), (2, 3), (3, 4), (4, 5), (3, 5), (5, 6)]
    >>> a = _symmetric(7, *map(np.array, zip(*ring)), np.ones(len(ring)))
    >>> region_louvain(a, np.arange(7), np.array([0, 1, 2, 6]), [], 1.0, seed=7)
    ([[0, 1, 2]], [array([6])])
    """
    from scipy import sparse
    from sknetwork.clustering import Louvain

    scope, region = np.sort(np.asarray(scope, dtype=np.int64)), np.sort(np.asarray(region, dtype=np.int64))
    sub = adjacency[scope][:, scope]
    at = np.searchsorted(scope, region)
    unit = np.full(len(region), -1, dtype=np.int64)
    for b, block in enumerate(blocks):
        unit[np.searchsorted(region, block)] = b
    alone = unit < 0
    unit[alone] = len(blocks) + np.arange(int(alone.sum()))
    units = [np.asarray(b, dtype=np.int64) for b in blocks] + [region[[i]] for i in np.flatnonzero(alone)]
    inner = sub[at][:, at]
    degree = np.asarray(sub[at].sum(axis=1)).ravel()
    boundary = degree - np.asarray(inner.sum(axis=1)).ravel()
    total = float(sub.sum())
    rest = max(total - float(inner.sum()) - 2 * float(boundary.sum()), 0.0)
    membership = sparse.csr_matrix((np.ones(len(region)), (np.arange(len(region)), unit)),
                                   shape=(len(region), len(units)))
    graph = (membership.T @ inner @ membership).tocsr()
    held = boundary.sum() > 0 or rest > 0
    if held:  # the rest of the scope, one node
        out = sparse.csr_matrix((membership.T @ boundary)[:, None])
        graph = sparse.bmat([[graph, out], [out.T, sparse.csr_matrix([[rest]])]], format="csr")
    if graph.nnz == 0:
        return sorted(u.tolist() for u in units), []
    share = float(degree.sum()) / total if total else 1.0
    tolerance = max(_TOLERANCE * share, 1e-7)
    labels = Louvain(resolution=resolution, modularity="newman", shuffle_nodes=True, random_state=seed,
                     tol_optimization=tolerance, tol_aggregation=tolerance, return_probs=False,
                     return_aggregate=False).fit_predict(graph)
    leaving = labels[len(units)] if held else -1
    node_labels = labels[unit]
    stays = node_labels != leaving
    return _groups(node_labels[stays], region[stays]), [u for i, u in enumerate(units) if labels[i] == leaving]


def _placed(adjacency: sparse.csr_matrix, scope: np.ndarray, kept: list[Block], blocks: list[Block],
            resolution: float, seed: int) -> tuple[list[list[int]], dict[int, int]]:
    """The parts of ``scope``: the ``kept`` parts as they were, and :func:`region_louvain` over the
    rest, started from ``blocks``. A unit that would rather join the rest joins the kept part it
    is most tied to, and a part found in the region joins the kept part whose joining gains most
    modularity, if any does (Louvain's next level, which the rest held as one node could not
    take): each such kept part changes. Also returns each part that is a kept part unchanged
    (part index -> its index in the previous partition)."""
    owner = np.full(adjacency.shape[0], -1, dtype=np.int64)
    for k, block in enumerate(kept):
        owner[block.nodes] = k
    inside = np.zeros(adjacency.shape[0], dtype=bool)
    inside[scope] = True
    region = np.flatnonzero(inside & (owner < 0))
    found, leaving = region_louvain(adjacency, scope, region, [b.nodes for b in blocks], resolution, seed) \
        if len(region) else ([], [])
    degree = np.zeros(adjacency.shape[0])
    degree[scope] = np.asarray(adjacency[scope][:, scope].sum(axis=1)).ravel()
    total = float(degree.sum())
    kept_degree = np.array([degree[b.nodes].sum() for b in kept])
    grown: dict[int, list[int]] = {}
    alone: list[list[int]] = []

    def join(nodes: np.ndarray, by_gain: bool) -> bool:
        rows = adjacency[nodes]
        tied = owner[rows.indices] >= 0
        if not tied.any() or not total:
            return False
        weights = np.bincount(owner[rows.indices[tied]], weights=rows.data[tied], minlength=len(kept))
        score = weights - resolution * degree[nodes].sum() * kept_degree / total if by_gain else weights
        k = int(np.argmax(score))
        if score[k] <= 0:
            return False
        grown.setdefault(k, []).extend(nodes.tolist())
        owner[nodes] = k
        kept_degree[k] += degree[nodes].sum()
        return True

    for unit in leaving:
        if not join(unit, by_gain=False):
            alone.append(unit.tolist())
    for part in found:
        if not join(np.asarray(part, dtype=np.int64), by_gain=True):
            alone.append(part)
    parts = alone + [sorted(b.nodes.tolist() + grown.get(k, [])) for k, b in enumerate(kept)]
    parts.sort()
    first = {int(b.nodes[0]): b.part for k, b in enumerate(kept) if k not in grown}
    return parts, {i: first[p[0]] for i, p in enumerate(parts) if p[0] in first}


def _groups(labels: np.ndarray, nodes: np.ndarray) -> list[list[int]]:
    """``nodes`` grouped by their ``labels``: each group in node order, the groups sorted.

    >>> _groups(np.array([1, 0, 1, 2]), np.array([10, 11, 12, 13]))
    [[10, 12], [11], [13]]
    """
    if not len(nodes):
        return []
    order = np.lexsort((nodes, labels))
    bounds = np.flatnonzero(np.r_[True, np.diff(labels[order]) != 0, True])
    return sorted(nodes[order[a:b]].tolist() for a, b in zip(bounds[:-1], bounds[1:]))


@dataclass
class Detection:
    """The communities of one detection, and the partition the next one starts from."""

    communities: list[Community]
    """Level by level; in a level, the largest first (then by first member)."""
    partition: Partition
    """Every node in its part at each level."""
    changed: int | None = None
    """Nodes new or with other neighbours since the partition started from (None: from scratch)."""
    kept: int = 0
    """Themes of the partition started from kept whole."""
    seconds: dict[str, float] = field(default_factory=dict)


def detection_digest(graph: ContextGraph, **options) -> str:
    """What a partition made by :func:`detect` under ``options`` on ``graph`` is marked with: the
    options, the weight the graph gives title links and the detection rules (a partition marked
    otherwise is not started from)."""
    shaping = {**options, "title_link_weight": graph.passages.title_link_weight, "rules": DETECTION_RULES}
    return hashlib.sha1(json.dumps(shaping, sort_keys=True).encode()).hexdigest()[:12]


def detect(graph: ContextGraph, *, resolution: float = setting_default("communities.resolution"),
           seed: int = setting_default("communities.seed"),
           min_size: int = setting_default("communities.min_size"),
           relation_weight: float = setting_default("communities.relation_weight"),
           levels: int = setting_default("communities.levels"), texts: Mapping[str, str] | None = None,
           words_per_passage: int = setting_default("communities.words_per_passage"),
           previous: Partition | None = None) -> Detection:
    """Themes and their sub-themes, each of at least ``min_size`` entities, and the partition
    they come from; started from ``previous`` (the partition of an earlier detection under the
    same options) when given.

    Parameters
    ----------
    graph : ContextGraph
        The one context graph.
    resolution : float
        Louvain resolution: above 1 gives more, smaller communities.
    seed : int
        Louvain's seed; the same graph, seed and ``previous`` always give the same communities.
    min_size : int
        Fewest entities of a community.
    relation_weight : float
        Weight of a cited relation per stating chunk, against 1 for a mention.
    levels : int
        1: themes only; 2: themes and sub-themes; more: split again.
    texts : mapping of chunk id to text, optional
        The passages' texts: each passage is then also linked to its most distinctive words.
    words_per_passage : int
        How many of its words (:func:`passage_words`) each passage is linked to.
    previous : Partition, optional
        Where the last detection left every node. Its parts that hold no changed node stay
        whole; a partition made under other options is not used (the detection starts afresh).

    Returns
    -------
    Detection
        The communities, the partition, and how many nodes had changed.
    """
    start = time.perf_counter()
    adjacency, names = community_graph(graph, relation_weight, texts, words_per_passage)
    digest = detection_digest(graph, resolution=resolution, seed=seed, min_size=min_size,
                              relation_weight=relation_weight, levels=levels, words_per_passage=words_per_passage)
    fingerprints = node_fingerprints(adjacency, names)
    built = time.perf_counter()
    changes = previous.changes(names, fingerprints) if previous is not None and previous.digest == digest else None
    is_entity = np.array([not isinstance(n, tuple) for n in names], dtype=bool)
    is_passage = np.array([isinstance(n, tuple) and n[0] == "p" for n in names], dtype=bool)

    def entities(part: Sequence[int]) -> int:
        return int(is_entity[part].sum())

    def community(part: list[int], level: int, parent: frozenset[str] | None, parent_id: str | None = None) -> Community:
        return Community(frozenset(names[i] for i in part if is_entity[i]),
                         frozenset(names[i][1] for i in part if is_passage[i]), level, parent, parent_id)

    everything = np.arange(len(names), dtype=np.int64)
    unchanged: dict[int, int] = {}  # part of the level just detected -> the previous part it equals
    if changes is None:
        parts = _fresh_themes(adjacency, entities, min_size, resolution, seed)
    else:
        parts, unchanged = _placed(adjacency, everything, previous.kept(changes, 0, everything),  # type: ignore[union-attr]
                                   previous.blocks(changes, 0, everything), resolution, seed)  # type: ignore[union-attr]
    kept_themes = len(unchanged)
    labels = [_labels(len(names), parts)]
    parents = [np.full(len(parts), -1, dtype=np.int64)]
    found = [community(p, 0, None) for p in parts if entities(p) >= min_size]
    current = [(i, p) for i, p in enumerate(parts) if entities(p) >= min_size]
    for level in range(1, max(levels, 1)):
        below: list[tuple[int, list[int]]] = []
        level_parts: list[list[int]] = []
        level_parents: list[int] = []
        next_unchanged: dict[int, int] = {}
        for index, part in current:
            if entities(part) < 2 * min_size:
                continue
            sub, same = _split(adjacency, np.asarray(part, dtype=np.int64), level, previous, changes,
                               unchanged.get(index), resolution, seed)
            offset = len(level_parts)
            level_parts.extend(sub)
            level_parents.extend([index] * len(sub))
            next_unchanged.update((offset + i, p) for i, p in same.items())
            # A sub-theme holds passages of its own when its theme has any (two, or all of them).
            needed = min(2, int(is_passage[part].sum()))
            split = [(offset + i, p) for i, p in enumerate(sub)
                     if entities(p) >= min_size and int(is_passage[p].sum()) >= needed]
            if len(split) >= 2:
                parent = community(part, level - 1, None).members
                parent_id = report_id(parent)
                found.extend(community(p, level, parent, parent_id) for _, p in split)
                below.extend(split)
        labels.append(_labels(len(names), level_parts))
        parents.append(np.asarray(level_parents, dtype=np.int64))
        current, unchanged = below, next_unchanged
    end = time.perf_counter()
    return Detection(sorted(found, key=lambda c: (c.level, -len(c.members), min(c.members))),
                     Partition(names, fingerprints, labels, parents, digest),
                     None if changes is None else changes.count, kept_themes,
                     {"graph": round(built - start, 6), "louvain": round(end - built, 6)})


def _fresh_themes(adjacency: sparse.csr_matrix, entities, min_size: int, resolution: float,
                  seed: int) -> list[list[int]]:
    """Louvain's parts of each connected component of ``min_size`` entities or more; a smaller
    component is one part (it is never a theme)."""
    from scipy.sparse.csgraph import connected_components

    _, component_of = connected_components(adjacency, directed=False)
    parts: list[list[int]] = []
    for component in _groups(component_of, np.arange(len(component_of))):
        parts.extend(louvain(adjacency, component, resolution, seed) if entities(component) >= min_size
                     else [component])
    return sorted(parts)


def _split(adjacency: sparse.csr_matrix, part: np.ndarray, level: int, previous: Partition | None,
           changes: Changes | None, same_as: int | None, resolution: float,
           seed: int) -> tuple[list[list[int]], dict[int, int]]:
    """The parts of ``part`` one level down: the previous ones as they were when ``part`` is a
    previous part unchanged (``same_as``), else Louvain started from the previous parts inside it."""
    if previous is None or changes is None:
        return louvain(adjacency, part, resolution, seed), {}
    if same_as is not None:
        children = [c for c in previous.children(level - 1, same_as) if c in changes.members[level]]
        kept = {c: changes.members[level][c] for c in children}
        if children and sum(len(k) for k in kept.values()) == len(part):
            children.sort(key=lambda c: int(kept[c][0]))
            return [kept[c].tolist() for c in children], dict(enumerate(children))
    return _placed(adjacency, part, previous.kept(changes, level, part), previous.blocks(changes, level, part),
                   resolution, seed)


def _labels(n: int, parts: Sequence[Sequence[int]]) -> np.ndarray:
    labels = np.full(n, -1, dtype=np.int64)
    for i, part in enumerate(parts):
        labels[np.asarray(part, dtype=np.int64)] = i
    return labels


def modularity(adjacency: sparse.csr_matrix, labels: np.ndarray,
               resolution: float = setting_default("communities.resolution")) -> float:
    """Newman's modularity of the partition ``labels`` (a part per node) of the undirected graph
    ``adjacency``: how much more weight falls inside the parts than chance would put there.

    >>> ring = [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5), (2, 3)]
    >>> a = _symmetric(6, *map(np.array, zip(*ring)), np.ones(len(ring)))
    >>> round(modularity(a, np.array([0, 0, 0, 1, 1, 1])), 4)
    0.3571
    """
    total = float(adjacency.sum())
    if not total:
        return 0.0
    coo = adjacency.tocoo()
    inside = float(coo.data[labels[coo.row] == labels[coo.col]].sum())
    degree = np.bincount(labels, weights=np.asarray(adjacency.sum(axis=1)).ravel())
    return inside / total - resolution * float((degree / total) @ (degree / total))


def detect_communities(graph: ContextGraph, **options) -> list[Community]:
    """The communities of :func:`detect` (same keyword options), from scratch."""
    return detect(graph, **options).communities


def report_id(members: Iterable[str]) -> str:
    """``c-`` and 10 hex of the hash of the sorted member keys."""
    return "c-" + hashlib.sha1("\n".join(sorted(members)).encode()).hexdigest()[:10]
