"""The material for an answer, typed: :class:`AnswerContext` and its parts.

:func:`workbench.answer.material.build_context` makes it from a retrieval result; the prompt, the
Markdown and the answer checks (:func:`workbench.answer.checks.check_answer`) read it.
Its ``to_json()`` (also :attr:`AnswerContext.data`) is what ``context --json`` prints.

Examples
--------
>>> hop = Hop("login flow", "depends_on", "auth service", 1, ("c1",), ("a.md",))
>>> context = AnswerContext("Does the login flow need the auth service?",
...                         subgraph=Subgraph(["login flow", "auth service"], [hop]),
...                         chunks=[SourceChunk("c1", "a.md", "The login flow depends on the auth service.")])
>>> sorted(context.data)
['answer_path', 'chunks', 'hypotheses', 'mode', 'outdated', 'question', 'subgraph']
>>> context.data["chunks"]
[{'id': 'c1', 'document': 'a.md', 'text': 'The login flow depends on the auth service.'}]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .graph import GraphPath, Hop
from .jsonable import NOT_IN_JSON, to_json

__all__ = ["SourceChunk", "AnswerPath", "Subgraph", "Hypothesis", "AnswerContext"]


@dataclass(frozen=True)
class SourceChunk:
    """A chunk the answer may cite."""

    id: str
    """The chunk id (its citation)."""
    document: str
    """Its document."""
    text: str
    """Its text."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self)


@dataclass
class AnswerPath:
    """The question's structural reading and the cited paths that answer it, best first."""

    reading: str | None
    """``impact``, ``owner``... (see :mod:`workbench.retrieve.questions`), or None without one."""
    summary: str
    """What was found, or why no cited path is known to answer."""
    paths: list[GraphPath] = field(default_factory=list)
    """The cited paths."""

    def to_json(self) -> dict[str, Any]:
        """Each path as its ``nodes`` and ``hops``."""
        return to_json(self, paths=[{"nodes": list(p.nodes), "hops": p.hops} for p in self.paths])


@dataclass
class Subgraph:
    """The graph the answer may state: the answer path's hops first, then the other cited edges."""

    nodes: list[str] = field(default_factory=list)
    """Display names, those on the answer path first."""
    edges: list[Hop] = field(default_factory=list)
    """Cited edges, each once."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self)


@dataclass(frozen=True)
class Hypothesis:
    """A statement touching the context that an answer may not state as fact: a candidate
    relation, or an edge below ``answers.min_edge_confidence``."""

    source: str
    """Its subject."""
    relation: str
    """Its relation."""
    target: str
    """Its object."""
    chunks: tuple[str, ...]
    """The chunks it comes from."""
    kind: str
    """``candidate`` or ``low-confidence edge``."""
    confidence: float
    """How sure its extractor was."""
    edge: Hop | None = field(default=None, metadata=NOT_IN_JSON)
    """For a low-confidence edge, the edge; its JSON is the edge's with the ``kind``."""

    def to_json(self) -> dict[str, Any]:
        if self.edge is not None:
            return {**self.edge.to_json(), "kind": self.kind}
        return to_json(self)


@dataclass
class AnswerContext:
    """The material for an answer: the question, the hops that answer it, the subgraph, the
    cited chunks, the hypotheses touching them and the notes a later one outdates."""

    question: str
    """The question as asked."""
    mode: str = ""
    """The retrieval mode that found the material."""
    answer_path: AnswerPath | None = None
    """The hops that answer the question (None: the material has no such section)."""
    subgraph: Subgraph = field(default_factory=Subgraph)
    """The cited edges the answer may state."""
    chunks: list[SourceChunk] = field(default_factory=list)
    """The sources, the answer path's first."""
    hypotheses: list[Hypothesis] = field(default_factory=list)
    """What the answer may not state as fact."""
    outdated: dict[str, list[str]] = field(default_factory=dict)
    """Document of a source -> the later notes that outdate it."""
    markdown: str = field(default="", compare=False, metadata=NOT_IN_JSON)
    """The material as Markdown, for people (made by :func:`workbench.answer.material.build_context`)."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self)

    @property
    def data(self) -> dict[str, Any]:
        """The material as JSON-ready data: what the prompt and the Markdown are rendered from."""
        return self.to_json()
