"""One library call per graph question, each returning its typed answer.

The CLI and the MCP server ask the same four questions of the one graph; each calls one of
these functions and emits the answer's ``to_json()``, so the two can never drift apart:

- :func:`impact`: what breaks if an entity fails (:class:`~workbench.model.Impact`);
- :func:`neighborhood`: what is within n hops of it (:class:`~workbench.model.Neighborhood`);
- :func:`comentions`: what is named beside it (:class:`~workbench.model.Comentions`);
- :func:`paths_between`: how one entity leads to another (:class:`~workbench.model.PathAnswer`),
  searched as deep and as wide as ``settings.graph`` says unless told otherwise.

``ws`` is anything with ``graph`` (a :class:`~workbench.context_graph.graph.ContextGraph`) and ``settings``: a
:class:`~workbench.workspace.workspace.Workspace` or a scoped view of one. An entity no name resolves to
raises :class:`~workbench.context_graph.graph.EntityNotFound`, with suggestions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol

from ..model import Comention, Comentions, Impact, Neighbour, Neighborhood, PathAnswer

if TYPE_CHECKING:
    from ..settings import Settings
    from .graph import ContextGraph

__all__ = ["impact", "neighborhood", "comentions", "paths_between", "IMPACT_READINGS"]


#: The readings of :func:`impact`: failure spread along every relation, or the dependency ones.
IMPACT_READINGS = ("all", "dependencies")


class GraphReader(Protocol):
    """What a graph question reads of a workspace (or of a scoped view of one)."""

    @property
    def graph(self) -> ContextGraph: ...

    @property
    def settings(self) -> Settings: ...


def impact(ws: GraphReader, entity: str, relations: Literal["all", "dependencies"] = "all") -> Impact:
    """What breaks if ``entity`` fails, each impacted entity with its cited path, and the survivors.

    ``relations``: ``all`` spreads the failure along every cited relation (seed 001's
    ``impacted_by``), ``dependencies`` along ``settings.graph.impact_relations`` only (A
    depends_on B: A breaks when B fails). The answer says which (``relations``).

    Raises
    ------
    ValueError
        If ``relations`` is neither ``all`` nor ``dependencies``.
    """
    if relations not in IMPACT_READINGS:
        raise ValueError(f"relations must be 'all' or 'dependencies', got {relations!r}")
    graph = ws.graph
    return graph.impacted_by(entity, None if relations == "all" else graph.impact_relations)


def neighborhood(ws: GraphReader, entity: str, hops: int = 1, direction: Literal["out", "in", "both"] = "out") -> Neighborhood:
    """The entities within ``hops`` edges of ``entity`` (``out`` along stored edges, ``in`` against
    them, ``both`` either way) and the cited edges walked; co-mention edges are not walked.

    Raises
    ------
    ValueError
        If ``hops`` is negative or ``direction`` is not ``out``, ``in`` or ``both``.
    """
    graph = ws.graph
    walk = graph.neighbors(entity, hops=hops, direction=direction)
    return Neighborhood(center=walk.center, entities=[Neighbour(name, distance) for name, distance in walk.entities],
                        edges=[graph.cited_hop(edge) for edge in walk.edges])


def comentions(ws: GraphReader, entity: str) -> Comentions:
    """The entities named in the same chunks as ``entity``, most corroborated first, each with
    its co-mention edge (weight, chunks, first and last seen)."""
    graph = ws.graph
    found = graph.comention_neighbors(entity)
    return Comentions(center=graph.name(graph.resolve(entity)),
                      comentions=[Comention(name, graph.cited_hop(edge)) for name, edge in found])


def paths_between(ws: GraphReader, a: str, b: str, max_hops: int | None = None, k: int | None = None) -> PathAnswer:
    """Up to ``k`` cited paths from ``a`` to ``b`` of at most ``max_hops`` hops, best corroborated
    first; ``None`` takes ``settings.graph.max_paths`` and ``settings.graph.max_path_hops``."""
    graph, settings = ws.graph, ws.settings.graph
    max_hops = settings.max_path_hops if max_hops is None else max_hops
    found = graph.paths(a, b, max_hops=max_hops, k=settings.max_paths if k is None else k)
    return PathAnswer(source=graph.name(graph.resolve(a)), target=graph.name(graph.resolve(b)), paths=found,
                      max_hops=max_hops)
