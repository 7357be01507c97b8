"""Reading a question structurally: which graph walk answers it, from which entity.

Deterministic cues, tried in this order:

- ``lead``: "who leads the team that owns X" -- X -owned_by-> team <-leads- person;
- ``owner``: "who owns X", "which team maintains X", "owner of X" -- X -owned_by-> team;
- ``depends``: "what does X depend on / use / need / call", "dependencies of X" -- forward
  reachability over the impact relations;
- ``impact``: "what breaks if X fails / goes down", "X outage", "what depends on X" --
  reverse reachability;
- ``relate``: "how does X (relate | connect | link) to Y", "how are X and Y related", "what is
  the connection between X and Y" -- each side's entities (those it names, else the entities
  whose names are most like it), then the cited relation paths between the sides, else the
  shortest chain of co-mentions (each hop a passage naming both ends) that joins them; or any
  question naming two entities -- cited relation paths between them, either way.

The entity is the first one the question names that the walk can start from (an owner
question needs an entity with an owner). A question with none of these readings gets
``None``: the caller says so and answers by hybrid search, never with a walk nobody asked for.

Examples
--------
>>> cue_of("Who leads the team that owns the token cache?"), cue_of("Who owns Redis?")
('lead', 'owner')
>>> cue_of("What does the Quota Service depend on?"), cue_of("If Redis goes down, what breaks?")
('depends', 'impact')
>>> cue_of("How is the login flow related to Redis?") is None
True
"""

from __future__ import annotations

import itertools
import re
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..context_graph.graph import ContextGraph
from ..embedding import EmbeddingUnavailable
from ..extract.names import STOP_NAMES
from ..model import COMENTION_RELATION, GraphPath, Impact
from ..vectors.index import VectorStoreUnavailable
from .hybrid import hybrid_ranking
from .naming import find_entities, is_failure_question

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView
    import networkx as nx
from .vector import embed_query, entity_query

__all__ = ["Reading", "OWNER_RELATIONS", "LEAD_RELATIONS", "cue_of", "read_question", "relate_sides", "chain_paths"]

#: Relations that say who answers for an entity (stored direction: thing -> team).
OWNER_RELATIONS = ("owned_by",)
#: Relations that say who leads a team (stored direction: person -> team).
LEAD_RELATIONS = ("leads",)

_LEAD = re.compile(r"\b(?:who|which\s+person)\s+(?:leads|heads|runs|manages)\s+the\s+team\s+(?:that|which|who)\s+"
                   r"(?:owns|maintains|runs|is\s+responsible\s+for)\b|\blead(?:er)?\s+of\s+the\s+team\s+(?:that|which)\s+"
                   r"(?:owns|maintains)\b|\bteam\s+lead\s+(?:for|of)\b", re.IGNORECASE)
_OWNER = re.compile(r"\bwho\s+(?:owns|maintains|is\s+responsible\s+for|answers\s+for)\b|\bwhich\s+team\s+"
                    r"(?:owns|maintains|is\s+responsible\s+for|runs)\b|\bowner(?:s)?\s+of\b|\bowned\s+by\s+whom\b|"
                    r"\bwho\s+is\s+the\s+owner\b", re.IGNORECASE)
_DEPENDS = re.compile(r"\b(?:what|which\s+\w+)\s+(?:does|do|did)\s+.+?\s+(?:depend|rely|run|build)\s+(?:on|upon)\b|\b(?:what|which\s+\w+)\s+(?:does|do)\s+"
                      r".+?\s+(?:use|need|require|call|read\s+from|write\s+to|talk\s+to)\b|\bdependenc(?:y|ies)\s+of\b|"
                      r"\bdepends?\s+on\s+what\b|['\u2019]s\s+dependencies\b|\bwhat\s+is\s+.+?\s+built\s+on\b",
                      re.IGNORECASE)
# "What depends on X?", "Which services use X?": the dependents, the same walk as a failure.
_DEPENDENTS = re.compile(r"\bwhat\s+(?:else\s+)?(?:depends|relies|runs|is\s+built)\s+(?:on|upon)\b|\b(?:who|what)\s+"
                         r"(?:uses|calls|needs|reads\s+from|writes\s+to)\b|\bwhich\s+\w+\s+(?:depend|rely|run)\s+on\b|"
                         r"\bwhich\s+\w+\s+(?:use|call|need)\b(?!.*\b(?:does|do)\b)|\bdependents\s+of\b", re.IGNORECASE)
_RELATE = re.compile(r"\b(?:relat\w*|connect\w*|link\w*|between|and)\b", re.IGNORECASE)
_JOINED = r"(?:relate[sd]?|connect(?:s|ed)?|link(?:s|ed)?|tie[sd]?|fit(?:s)?)"
_END = r"\s*[?.!]*\s*$"
_RELATE_FORMS = [
    re.compile(rf"\bhow\s+(?:does|do|did|is|are|was|were|might|could|would|can)\s+(?P<x>.+?)\s+{_JOINED}"
               rf"(?:\s+(?:up|in))?\s+(?:to|with)\s+(?P<y>.+?){_END}", re.IGNORECASE),
    re.compile(rf"\bhow\s+(?:are|were|is)\s+(?P<x>.+?)\s+and\s+(?P<y>.+?)\s+{_JOINED}(?:\s+to\s+each\s+other)?{_END}",
               re.IGNORECASE),
    re.compile(rf"\b(?:what|which)\s+(?:is|are|was)\s+the\s+(?:relationship|relation|connection|link)s?\s+between\s+"
               rf"(?P<x>.+?)\s+and\s+(?P<y>.+?){_END}", re.IGNORECASE),
]
#: How surely a side of a relate question means the title of the passage that best matches it.
TITLE_SURENESS = 0.9
#: Passages searched for the one a side of a relate question that names no entity stands for.
SIDE_PASSAGES = 5
#: Extra similarity below the best that an evoked entity of one side of a question may have.
SIDE_MARGIN = 0.05
#: Evoked entities taken per side of a relate question, at most.
SIDE_SIMILAR = 3


def relate_sides(question: str) -> tuple[str, str] | None:
    """The two things a "how does X relate to Y" question joins, or ``None``.

    >>> relate_sides("How does Chen's CRISPR work relate to the Stanford gene therapy trial?")
    ("Chen's CRISPR work", 'the Stanford gene therapy trial')
    >>> relate_sides("What is the connection between Redis and the login flow?")
    ('Redis', 'the login flow')
    >>> relate_sides("Who owns Redis?") is None
    True
    """
    for form in _RELATE_FORMS:
        match = form.search(question)
        if match:
            return match.group("x").strip(), match.group("y").strip()
    return None


def cue_of(question: str) -> str | None:
    """The structural cue a question carries, before looking for its entities."""
    for kind, pattern in (("lead", _LEAD), ("owner", _OWNER), ("depends", _DEPENDS)):
        if pattern.search(question):
            return kind
    if is_failure_question(question) or _DEPENDENTS.search(question):
        return "impact"
    return None


@dataclass
class Reading:
    """A question read structurally: the walk, its start, and the cited paths it found."""

    kind: str
    """``lead``, ``owner``, ``depends``, ``impact`` or ``relate``."""
    entities: list[str]
    """Display names of the entities the walk starts from (two for ``relate``)."""
    paths: list[GraphPath] = field(default_factory=list)
    """The cited paths that answer it, best first."""
    impact: Impact | None = None
    """For ``impact``: the whole impact, survivors included."""

    @property
    def summary(self) -> str:
        """One line: the reading and what it found."""
        start = " and ".join(self.entities)
        asked = {"lead": f"who leads the team that owns {start}", "owner": f"who owns {start}",
                 "depends": f"what {start} depends on", "impact": f"what breaks if {start} fails",
                 "relate": f"how {start} relate"}[self.kind]
        return f"{self.kind} question ({asked}): {len(self.paths)} cited paths"


def _out(graph: ContextGraph, key: str, relations) -> list:
    return [edge for edge in graph.out_edges(key) if edge.relation in relations]


def _in(graph: ContextGraph, key: str, relations) -> list:
    return [edge for edge in graph.in_edges(key) if edge.relation in relations]


def _owner_paths(graph: ContextGraph, key: str) -> list[GraphPath]:
    return [GraphPath(nodes=[graph.name(key), graph.name(e.target)], hops=[graph.cited_hop(e)])
            for e in sorted(_out(graph, key, OWNER_RELATIONS), key=lambda e: (-e.weight, e.target))]


def _lead_paths(graph: ContextGraph, key: str) -> list[GraphPath]:
    paths = []
    for owned in sorted(_out(graph, key, OWNER_RELATIONS), key=lambda e: (-e.weight, e.target)):
        for led in sorted(_in(graph, owned.target, LEAD_RELATIONS), key=lambda e: (-e.weight, e.source)):
            paths.append(GraphPath(nodes=[graph.name(key), graph.name(owned.target), graph.name(led.source)],
                                   hops=[graph.cited_hop(owned), graph.cited_hop(led)]))
    return paths


def read_question(ws: WorkspaceView, question: str, keys: list[str] | None = None) -> Reading | None:
    """The structural reading of ``question`` on ``ws``'s graph, with its cited paths, or ``None``.

    ``keys`` are the entities the question names, in order (found in its text by default).
    """
    graph = ws.graph
    cue = cue_of(question)
    sides = relate_sides(question) if cue is None else None
    if sides is not None:
        reading = _relate_reading(ws, *sides)
        if reading is not None:
            return reading
    keys = find_entities(ws, question) if keys is None else keys
    # Only entities that take part in a cited relation can start a walk ("Tell" in "Tell me..." cannot).
    keys = [key for key in keys
            if any(edge.relation != COMENTION_RELATION for edge in graph.out_edges(key) + graph.in_edges(key))]
    if not keys:
        return None
    impact_relations = set(graph.impact_relations)
    if cue == "lead":
        for key in keys:
            paths = _lead_paths(graph, key)
            if paths:
                return Reading("lead", [graph.name(key)], paths)
        cue = "owner"  # no lead recorded: who owns it is the nearest answer
    if cue == "owner":
        for key in keys:
            paths = _owner_paths(graph, key)
            if paths:
                return Reading("owner", [graph.name(key)], paths)
        return None
    if cue == "depends":
        for key in keys:
            if _out(graph, key, impact_relations):
                found = graph.dependencies_of(key)
                return Reading("depends", [graph.name(key)], [path for _, path in found])
        return None
    if cue == "impact":
        for key in keys:
            impact = graph.impacted_by(key, graph.impact_relations)  # what breaks: the dependency reading
            if impact.impacted:
                # "If Redis goes down, does the login flow break?": the path to the entity asked about first.
                asked = {graph.name(other) for other in keys if other != key}
                impacted = sorted(impact.impacted, key=lambda item: item[0] not in asked)
                return Reading("impact", [impact.failed], [path for _, path in impacted], impact)
        return None
    if len(keys) >= 2 and _RELATE.search(question):
        settings = ws.settings.graph
        paths = graph.paths(keys[0], keys[1], max_hops=settings.max_path_hops, k=settings.max_paths)
        if paths:
            return Reading("relate", [graph.name(keys[0]), graph.name(keys[1])], paths)
    return None


def _side_keys(ws: WorkspaceView, side: str) -> dict[str, float]:
    """The entities one side of a relate question stands for, each with how surely: those it
    names (1.0); when it names none, the title of the passage that best matches it
    (:data:`TITLE_SURENESS`: of the best :data:`SIDE_PASSAGES` by keyword and vector search, the
    first that writes every capitalised word of the side, "Stanford" in "the Stanford trial"),
    else the entities whose names are most like it (their similarity, within
    :data:`SIDE_MARGIN` of the best, at the seed threshold)."""
    graph = ws.graph
    layer = graph.passages

    def usable(key: str | None) -> bool:
        return key is not None and key in graph and key not in layer.common and graph.entity(key).type != "date"

    found = {key: 1.0 for key in layer.matcher.find(side) if usable(key)}
    if found:
        return found
    try:
        vector = embed_query(ws, side)
        best = [cid for cid, _, _ in hybrid_ranking(ws, side, vector, SIDE_PASSAGES)]
        matches = entity_query(ws, vector, SIDE_SIMILAR * 3)
    except (EmbeddingUnavailable, VectorStoreUnavailable):
        return found
    capitalised = {w.casefold() for w in re.findall(r"\b[A-Z][\w-]*", side) if w.casefold() not in STOP_NAMES}
    texts = {chunk.id: {w.casefold() for w in re.findall(r"[\w-]+", chunk.text)} for chunk in ws.chunks(best)}
    best.sort(key=lambda cid: not capitalised <= texts.get(cid, set()))  # stable: search order within
    title = layer.title_of.get(best[0]) if best else None
    if title is not None and usable(title):
        return {title: TITLE_SURENESS}
    threshold = ws.settings.graphrag.seed_similarity_threshold
    similar = sorted(((m.similarity, m.id) for m in matches if usable(m.id)), key=lambda pair: (-pair[0], pair[1]))
    for sim, key in similar[:SIDE_SIMILAR]:
        if sim >= max(threshold, similar[0][0] - SIDE_MARGIN):
            found.setdefault(key, round(float(sim), 6))
    return found


_PROJECTIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _link_graph(graph: ContextGraph) -> nx.Graph:
    """Entities joined by cited relations and co-mentions (a passage naming both), undirected;
    dates and common names left out. Built once per graph."""
    import networkx as nx  # here: the CLI imports the retrievers for every command

    found = _PROJECTIONS.get(graph)
    if found is None:
        found = nx.Graph()
        skip = set(graph.passages.common) | {key for key in graph.keys() if graph.entity(key).type == "date"}
        for edge in sorted(graph.edges() + graph.comention_edges(), key=lambda e: (-e.weight, e.source, e.target)):
            if edge.source in skip or edge.target in skip or edge.source == edge.target:
                continue
            if not found.has_edge(edge.source, edge.target):
                found.add_edge(edge.source, edge.target, edge=edge)
        _PROJECTIONS[graph] = found
    return found


#: Shortest chains enumerated per pair of ends, at most.
_CHAINS_PER_PAIR = 20


def chain_paths(graph: ContextGraph, starts: dict[str, float], ends: dict[str, float], max_hops: int,
                k: int) -> list[GraphPath]:
    """The shortest chains from any of ``starts`` to any of ``ends`` (entity key -> how surely
    the question means it) over cited relations and co-mentions, at most ``max_hops`` long: those
    between the surest ends first, then the shortest, then the best corroborated (the weakest
    hop's weight), then by name; at most ``k``."""
    import networkx as nx

    links = _link_graph(graph)
    found: list[tuple[float, list[str], list]] = []
    for a, b in itertools.product(starts, ends):
        if a == b or a not in links or b not in links:
            continue
        try:
            for nodes in itertools.islice(nx.all_shortest_paths(links, a, b), _CHAINS_PER_PAIR):
                if len(nodes) - 1 <= max_hops:
                    edges = [links.edges[u, v]["edge"] for u, v in itertools.pairwise(nodes)]
                    found.append((starts[a] + ends[b], nodes, edges))
        except nx.NetworkXNoPath:
            continue
    found.sort(key=lambda item: (-item[0], len(item[2]), -min(e.weight for e in item[2]),
                                 [graph.name(n) for n in item[1]]))
    return [GraphPath(nodes=[graph.name(n) for n in nodes], hops=[graph.cited_hop(e) for e in edges])
            for _, nodes, edges in found[:k]]


def _relate_reading(ws: WorkspaceView, x: str, y: str) -> Reading | None:
    """Cited relation paths from side ``x`` to side ``y``, else the shortest chains joining them;
    those between the entities each side surely means first."""
    graph = ws.graph
    starts = _side_keys(ws, x)
    ends = {key: score for key, score in _side_keys(ws, y).items() if key not in starts}
    if not starts or not ends:
        return None
    settings = ws.settings.graph
    stated = [(starts[a] + ends[b], path) for a, b in itertools.product(starts, ends)
              for path in graph.paths(a, b, max_hops=settings.max_path_hops, k=settings.max_paths)]
    stated.sort(key=lambda item: (-item[0], -item[1].corroboration, len(item[1].hops)))
    paths = [path for _, path in stated[:settings.max_paths]] or chain_paths(
        graph, starts, ends, settings.max_path_hops, settings.max_paths)
    if not paths:
        return None
    return Reading("relate", [paths[0].nodes[0], paths[0].nodes[-1]], paths)
