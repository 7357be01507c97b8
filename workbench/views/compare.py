"""What the Compare page says before the hits: the answer a structural reading gives, which
documents each strategy missed, which hits a later note supersedes, and each hit's reason in a
few words (the full sentence stays one click away).

Examples
--------
>>> from workbench.model import Hit, RetrievalResult, Why
>>> a = RetrievalResult("q", "vector", "vector", hits=[Hit("c1", "redis.md", "t", 0.9, 1)])
>>> b = RetrievalResult("q", "paths", "paths", hits=[Hit("c2", "auth-service.md", "t", 1.0, 1),
...                                                  Hit("c1", "redis.md", "t", 0.5, 2)])
>>> missed_documents({"vector": a, "paths": b})
{'vector': ['auth-service.md'], 'paths': []}
>>> short_why(Why(similarity=0.613))
'Close in meaning to the question (0.61).'
>>> short_why(Why(rrf=0.03, ranks={"keyword": 2, "vector": None}))
'Found by word search.'
>>> short_why(Why(rrf=0.03, ranks={"walk": 6, "provenance": 1, "hybrid": 3}))
"Found by the graph walk from the question's entities, the relations it states and word and meaning search."
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import TYPE_CHECKING

from ..context_graph.graph import COMENTION_RELATION, EntityNotFound
from ..text.safe_text import printable
from ..model import GraphPath, Hit, RetrievalResult, Why

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView

__all__ = ["AnswerFirst", "answer_first", "question_entities", "missed_documents", "superseded_by", "newer_first", "short_why",
           "highlight_terms"]

_ASKED = {"lead": "Who leads the team that owns {0}", "owner": "Who owns {0}", "depends": "What {0} depends on",
          "impact": "What breaks if {0} fails", "relate": "How {0} relate"}


@dataclass
class AnswerFirst:
    """The answer a question's structural reading gives, read off the graph before any hit."""

    kind: str
    """The reading: ``impact``, ``depends``, ``owner``, ``lead`` or ``relate``."""
    asked: str
    """What the question asks, in words ("What breaks if Redis fails")."""
    impacted: list[str] = field(default_factory=list)
    """Entities reached: what breaks (impact), what it depends on (depends), the answer's names
    (owner, lead), or the entities along the paths (relate)."""
    survivors: list[str] = field(default_factory=list)
    """For an impact: the infrastructure left standing (entities of an impact relation that are
    not impacted); people, teams and incidents are left out unless they take part in one."""
    left_out: int = 0
    """Survivors of the graph left out of :attr:`survivors` (no part in an impact relation)."""
    path: GraphPath | None = None
    """The best cited path behind the answer."""
    paths: list[GraphPath] = field(default_factory=list)
    """Every cited path behind the answer (an impact: one to each entity that breaks)."""

    @property
    def chains(self) -> list[GraphPath]:
        """The cited paths to show: those no other one extends, longest first; every entity of
        :attr:`impacted` lies on one of them (:func:`~workbench.views.retrieval.longest_chains`)."""
        from .retrieval import longest_chains

        return longest_chains(self.paths or ([self.path] if self.path is not None else []))

    @property
    def headline(self) -> str:
        """One line: the reading's answer."""
        names = ", ".join(printable(n) for n in self.impacted) or "nothing recorded"
        lead = {"impact": "Breaks", "depends": "Depends on", "owner": "Owner", "lead": "Lead"}.get(self.kind, "Along the way")
        return f"{lead}: {names}"


def question_entities(ws: WorkspaceView, question: str) -> list[str]:
    """Keys of the entities ``question`` names, as the paths mode and the answer first read them
    (else, for a structural question, the nearest entity name): one list for every column."""
    from ..retrieve.naming import find_entities
    from ..retrieve.paths import entity_by_similarity
    from ..retrieve.questions import cue_of

    keys = find_entities(ws, question) if question.strip() else []
    if not keys and question.strip() and cue_of(question) is not None:
        nearest = entity_by_similarity(ws, question)
        keys = [nearest] if nearest else []
    return keys


def answer_first(ws: WorkspaceView, question: str) -> AnswerFirst | None:
    """The structural answer to ``question`` on ``ws``'s graph, whatever retrieval mode is chosen;
    ``None`` when the question has no structural reading (see
    :func:`~workbench.retrieve.questions.read_question`)."""
    from ..retrieve.questions import read_question

    if not question.strip():
        return None
    reading = read_question(ws, question, question_entities(ws, question))
    if reading is None:
        return None
    start = " and ".join(printable(e) for e in reading.entities)
    asked = _ASKED[reading.kind].format(start)
    best = reading.paths[0] if reading.paths else None
    if reading.kind == "impact" and reading.impact is not None:
        impacted = [entity for entity, _ in reading.impact.impacted]
        infrastructure = _impact_ends(ws.graph)
        survivors = [name for name in reading.impact.survivors if _key(ws.graph, name) in infrastructure]
        return AnswerFirst("impact", asked, impacted, survivors, len(reading.impact.survivors) - len(survivors), best,
                           [path for _, path in reading.impact.impacted])
    if reading.kind in ("owner", "lead"):
        answers = list(dict.fromkeys(path.nodes[-1] for path in reading.paths))
        return AnswerFirst(reading.kind, asked, answers, path=best, paths=list(reading.paths))
    if reading.kind == "depends":
        reached = list(dict.fromkeys(path.nodes[-1] for path in reading.paths))
        return AnswerFirst("depends", asked, reached, path=best, paths=list(reading.paths))
    along = list(dict.fromkeys(n for path in reading.paths for n in path.nodes[1:-1]))
    return AnswerFirst(reading.kind, asked, along, path=best, paths=list(reading.paths))


def _key(graph, name: str) -> str | None:
    try:
        return graph.resolve(name)
    except EntityNotFound:
        return None


def _impact_ends(graph) -> set[str]:
    """Keys of the entities at either end of an impact relation: the infrastructure."""
    spread = set(graph.impact_relations)
    return {end for edge in graph.edges() if edge.relation in spread and edge.relation != COMENTION_RELATION
            for end in (edge.source, edge.target)}


def missed_documents(results: Mapping[str, RetrievalResult]) -> dict[str, list[str]]:
    """Mode -> the documents another mode returned that it did not, in the order first found."""
    found = {mode: {hit.document for hit in result.hits} for mode, result in results.items()}
    every = list(dict.fromkeys(hit.document for result in results.values() for hit in result.hits))
    return {mode: [doc for doc in every if doc not in found[mode]] for mode in results}


def superseded_by(outdated: Mapping[str, Iterable[str]], dates: Mapping[str, str | None],
                  as_of: date | None = None) -> dict[str, list[str]]:
    """Document -> the later notes that supersede it (from
    :func:`~workbench.corpus.outdated.outdated_documents`, CONTRADICTS and SUPERSEDES relations),
    keeping only notes dated on or before ``as_of``: on that day the older note still stood.

    >>> superseded_by({"old.md": ["new.md"]}, {"new.md": "2024-06-10"}, date(2024, 1, 1))
    {}
    >>> superseded_by({"old.md": ["new.md"]}, {"new.md": "2024-06-10"}, date(2024, 7, 1))
    {'old.md': ['new.md']}
    """
    out: dict[str, list[str]] = {}
    for old, newer in outdated.items():
        kept = [doc for doc in newer
                if as_of is None or not dates.get(doc) or str(dates[doc])[:10] <= as_of.isoformat()]
        if kept:
            out[old] = kept
    return out


def newer_first(hits: Sequence[Hit], superseded: Mapping[str, Iterable[str]]) -> list[Hit]:
    """``hits`` in rank order, except that a hit of a superseded document comes right after the
    first hit of a document superseding it, when that one is among the hits; ranks renumbered.

    >>> hits = [Hit("c1", "old.md", "t", 0.9, 1), Hit("c2", "other.md", "t", 0.8, 2), Hit("c3", "new.md", "t", 0.7, 3)]
    >>> [(h.document, h.rank) for h in newer_first(hits, {"old.md": ["new.md"]})]
    [('other.md', 1), ('new.md', 2), ('old.md', 3)]
    >>> [h.document for h in newer_first(hits, {"old.md": ["elsewhere.md"]})]
    ['old.md', 'other.md', 'new.md']
    """
    first: dict[str, int] = {}
    for position, hit in enumerate(hits):
        first.setdefault(hit.document, position)

    def place(item: tuple[int, Hit]) -> tuple[float, int]:
        position, hit = item
        after = [first[newer] + 0.5 for newer in superseded.get(hit.document, ()) if newer in first]
        return max([float(position), *after]), position

    ordered = [hit for _, hit in sorted(enumerate(hits), key=place)]
    return [replace(hit, rank=rank) for rank, hit in enumerate(ordered, 1)]


#: A fused ranking's parts, as people say them.
_RANKINGS = {"walk": "the graph walk from the question's entities", "provenance": "the relations it states",
             "hybrid": "word and meaning search", "keyword": "word search", "vector": "meaning search"}


def short_why(why: Why) -> str:
    """A hit's reason in a few plain words; :meth:`~workbench.model.Why.describe` has the details."""
    if why.cited_path is not None:
        step = why.cited_path
        return f"States step {step.hop_number} of the cited path {' → '.join(map(printable, step.path))}."
    if why.community is not None:
        return f"Quoted in the summary of the theme “{printable(why.community_title or why.community)}”."
    if why.rrf is not None:
        found = [_RANKINGS.get(name, f"{name} search") for name, rank in why.ranks.items() if rank is not None]
        return "Found by " + (", ".join(found[:-1]) + " and " + found[-1] if len(found) > 1 else
                              found[0] if found else "the fused ranking") + "."
    if why.via == "expansion":
        return f"Linked to a direct hit by the relation {printable(why.edge.relation)}." if why.edge else \
            "Linked to a direct hit by a relation."
    if why.via == "comention":
        return "Names entities mentioned together with a direct hit's."
    if why.ppr_mass is not None or why.pagerank is not None:
        return "Central to the question's entities in the graph walk."
    if why.matched_terms:
        return "Contains the words " + ", ".join(f"“{printable(t)}”" for t in why.matched_terms[:4]) + "."
    if why.literal_match:
        return "Contains " + ", ".join(f"“{printable(t)}”" for t in why.literal_match[:3]) + " literally."
    if why.similarity is not None:
        return f"Close in meaning to the question ({why.similarity:.2f})."
    return "Returned by this strategy."


def highlight_terms(why: Why) -> tuple[str, ...]:
    """The words of a hit's text its reason points at: matched words, literal identifiers, the
    names of the cited hop or edge, the entities it mentions."""
    terms: list[str] = list(why.matched_terms or []) + list(why.literal_match or []) + list(why.entities or [])
    hop = why.cited_path.hop if why.cited_path is not None else why.edge
    if hop is not None:
        terms += [hop.source, hop.target]
    return tuple(dict.fromkeys(t for t in terms if t))
