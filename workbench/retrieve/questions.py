"""Reading a question structurally: which graph walk answers it, from which entity.

Deterministic cues, tried in this order:

- ``lead``: "who leads the team that owns X" -- X -owned_by-> team <-leads- person;
- ``owner``: "who owns X", "which team maintains X", "owner of X" -- X -owned_by-> team;
- ``depends``: "what does X depend on / use / need / call", "dependencies of X" -- forward
  reachability over the impact relations;
- ``impact``: "what breaks if X fails / goes down", "X outage", "what depends on X" --
  reverse reachability;
- ``relate``: a question naming two entities -- cited paths between them, either way.

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

import re
from dataclasses import dataclass, field

from ..graph import ContextGraph
from ..model import GraphPath, Impact
from .naming import find_entities, is_failure_question

__all__ = ["Reading", "OWNER_RELATIONS", "LEAD_RELATIONS", "cue_of", "read_question"]

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


def read_question(ws, question: str, keys: list[str] | None = None) -> Reading | None:
    """The structural reading of ``question`` on ``ws``'s graph, with its cited paths, or ``None``.

    ``keys`` are the entities the question names, in order (found in its text by default).
    """
    graph = ws.graph
    cue = cue_of(question)
    keys = find_entities(ws, question) if keys is None else keys
    # Only entities that take part in a cited relation can start a walk ("Tell" in "Tell me..." cannot).
    keys = [key for key in keys
            if any(edge.relation != "co_mentioned" for edge in graph.out_edges(key) + graph.in_edges(key))]
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
            impact = graph.impacted_by(key)
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
