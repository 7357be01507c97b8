"""The dataclasses passed between the layers of the workbench.

Data flows one way: files -> :class:`Document` -> :class:`Chunk` -> :class:`Mention` and
:class:`Triple` -> :class:`Entity` and :class:`Edge` (the context graph) and vectors ->
:class:`Hit` in a :class:`RetrievalResult` -> views. One module per stage of that line:

- :mod:`~workbench.model.corpus`: documents, chunks, mentions, triples;
- :mod:`~workbench.model.graph`: entities, cited edges, merges; hops, paths; the typed answers of
  the graph questions (:class:`Impact`, :class:`Neighborhood`, :class:`Comentions`, :class:`PathAnswer`);
- :mod:`~workbench.model.retrieval`: the retrieval contract (:class:`RetrievalResult`, its
  :class:`Hit` objects and their :class:`Why`, :class:`RetrievalStats`, :class:`GraphContext`),
  each with one ``to_json()``;
- :mod:`~workbench.model.answer`: the material for an answer (:class:`AnswerContext`);
- :mod:`~workbench.model.summaries`: community reports, episodes, timelines, and the listings of them;
- :mod:`~workbench.model.outcomes`: what the workspace's steps report (:class:`IngestOutcome`,
  :class:`Removal`, :class:`Repair`...) and its counts (:class:`WorkspaceStats`);
- :mod:`~workbench.model.listings`: the lists a surface prints (entities, merges, candidates, models);
- :mod:`~workbench.model.searches`: modes side by side (:class:`Comparison`), a scoped search;
- :mod:`~workbench.model.jsonable`: the one ``to_json`` they all use, with one rule for None.

Import them from here: ``from workbench.model import Hit, RetrievalResult``.
"""

from __future__ import annotations

from .answer import AnswerContext, AnswerPath, Hypothesis, SourceChunk, Subgraph
from .corpus import DECLARED_RELATION_TYPES, Chunk, DeclaredRelation, Document, Mention, Segment, Triple
from .graph import (COMENTION_ORIGIN, COMENTION_RELATION, Comention, Comentions, Edge, Entity, GraphPath, Hop, Impact,
                    Merge, Neighbour, Neighborhood, PathAnswer, SurfaceForm, relation_phrases)
from .retrieval import (CommunityUse, ContextNode, GraphContext, Hit, PassageMass, PathStep, RetrievalResult,
                        RetrievalStats, Seed, TimeWindow, WindowUse, Why)
from .listings import CandidateList, EntityList, MergeList, ModelInstalled, ModelList, ModelState
from .outcomes import (AcceptedCandidate, AliasChange, IngestOutcome, NewIdentity, Removal, Repair, VectorCheck,
                       WorkspaceStats)
from .searches import Comparison, ScopedSearch
from .summaries import (CommunityListing, CommunityReport, Decision, Episode, EpisodeSearch, ReportPoint,
                        ThemesFrom, Timeline, TimelineEntry)

__all__ = [
    "DECLARED_RELATION_TYPES",
    "Segment",
    "DeclaredRelation",
    "Document",
    "Chunk",
    "Mention",
    "Triple",
    "COMENTION_ORIGIN",
    "COMENTION_RELATION",
    "Entity",
    "Edge",
    "SurfaceForm",
    "Merge",
    "Hop",
    "relation_phrases",
    "GraphPath",
    "Impact",
    "Neighbour",
    "Neighborhood",
    "Comention",
    "Comentions",
    "PathAnswer",
    "PathStep",
    "Why",
    "Hit",
    "Seed",
    "ContextNode",
    "PassageMass",
    "CommunityUse",
    "GraphContext",
    "TimeWindow",
    "WindowUse",
    "RetrievalStats",
    "RetrievalResult",
    "AnswerContext",
    "AnswerPath",
    "Subgraph",
    "SourceChunk",
    "Hypothesis",
    "ReportPoint",
    "CommunityReport",
    "Decision",
    "Episode",
    "TimelineEntry",
    "Timeline",
    "CommunityListing",
    "ThemesFrom",
    "EpisodeSearch",
    "WorkspaceStats",
    "IngestOutcome",
    "Removal",
    "NewIdentity",
    "Repair",
    "AliasChange",
    "AcceptedCandidate",
    "VectorCheck",
    "EntityList",
    "MergeList",
    "CandidateList",
    "ModelState",
    "ModelList",
    "ModelInstalled",
    "Comparison",
    "ScopedSearch",
]
