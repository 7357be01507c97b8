"""One library call per graph question: typed answers, their JSON round trip, and the one
``to_json`` rule for None."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import ClassVar

import pytest

from workbench.context_graph.graph import EntityNotFound
from workbench.context_graph.graph_questions import comentions, impact, neighborhood, paths_between
from workbench.model import Comentions, GraphContext, Impact, Neighborhood, PathAnswer, Seed, Why
from workbench.model.jsonable import NOT_IN_JSON, json_name, to_json


def through_json(data: dict) -> dict:
    """What a reader of the CLI's or the MCP server's output gets back."""
    return json.loads(json.dumps(data))


def test_neighborhood_round_trips_and_cites_every_edge(sample_workspace):
    hood = neighborhood(sample_workspace, "auth service", hops=2)
    assert hood.center.lower() == "auth service" and len(hood.entities) >= 2 and hood.edges
    assert {n.distance for n in hood.entities} == {1, 2}
    assert all(edge.chunks for edge in hood.edges)
    assert Neighborhood.from_json(through_json(hood.to_json())) == hood


def test_neighborhood_in_walks_against_the_stored_direction(sample_workspace):
    hood = neighborhood(sample_workspace, "Redis", direction="in")
    assert hood.entities and all(edge.target == "Redis" for edge in hood.edges)


def test_comentions_round_trip_most_corroborated_first(sample_workspace):
    found = comentions(sample_workspace, "redis")
    assert found.center == "Redis" and len(found.comentions) >= 2
    weights = [c.hop.weight for c in found.comentions]
    assert weights == sorted(weights, reverse=True)
    assert all("Redis" in (c.hop.source, c.hop.target) and c.entity != "Redis" for c in found.comentions)
    data = through_json(found.to_json())
    assert set(data) == {"center", "comentions"} and data["comentions"][0]["entity"] == found.comentions[0].entity
    assert Comentions.from_json(data) == found


def test_path_answer_round_trips_and_searches_as_deep_as_the_settings_say(sample_workspace):
    found = paths_between(sample_workspace, "login flow", "redis")
    assert found.max_hops == sample_workspace.settings.graph.max_path_hops
    assert found.paths and found.paths[0].nodes[-1] == "Redis" and found.source.lower() == "login flow"
    assert len(found.paths) <= sample_workspace.settings.graph.max_paths
    data = through_json(found.to_json())
    assert set(data) == {"from", "to", "paths"}  # how deep it searched is not part of the answer
    assert PathAnswer.from_json(data) == found
    one = paths_between(sample_workspace, "login flow", "redis", max_hops=10, k=1)
    assert one.max_hops == 10 and len(one.paths) == 1


def test_impact_is_the_graphs_impact(sample_workspace):
    found = impact(sample_workspace, "Redis")
    assert isinstance(found, Impact) and found.failed == "Redis" and found.impacted
    assert found.to_json() == sample_workspace.graph.impacted_by("Redis").to_json()


def test_impact_walks_every_relation_unless_asked_for_the_dependencies(sample_workspace, capsys):
    """Seed 001's impacted_by walks every reversed edge: the services the Platform team owns are
    impacted when it fails; the dependency reading finds none of them."""
    from workbench.cli import main

    every = impact(sample_workspace, "Platform team")
    dependencies = impact(sample_workspace, "Platform team", relations="dependencies")
    assert every.relations == "all" and dependencies.relations == "dependencies"
    assert every.impacted and not dependencies.impacted
    assert {name for name, _ in every.impacted}.isdisjoint(every.survivors)
    assert through_json(every.to_json())["relations"] == "all"
    workspace = ["--workspace", str(sample_workspace.path)]
    assert main(workspace + ["impact", "Platform team"]) == 0
    out = capsys.readouterr().out
    assert f"{len(every.impacted)} entities break (failure spread along every relation)" in out
    assert main(workspace + ["impact", "Platform team", "--relations", "dependencies"]) == 0
    assert "0 entities break (failure spread along the dependency relations" in capsys.readouterr().out
    with pytest.raises(ValueError, match="relations must be 'all' or 'dependencies'"):
        impact(sample_workspace, "Platform team", relations="owners")  # type: ignore[arg-type]


def test_neighborhood_walks_forward_by_default_as_seed_001s(sample_workspace, capsys):
    from workbench.cli import main

    hood = neighborhood(sample_workspace, "auth service")
    assert hood.entities and all(edge.source.lower() == "auth service" for edge in hood.edges)
    assert hood == neighborhood(sample_workspace, "auth service", direction="out")
    assert hood != neighborhood(sample_workspace, "auth service", direction="both")
    assert main(["--workspace", str(sample_workspace.path), "neighbors", "auth service", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == through_json(hood.to_json())


@pytest.mark.parametrize("ask", [lambda ws: neighborhood(ws, "Rediss"), lambda ws: comentions(ws, "Rediss"),
                                 lambda ws: paths_between(ws, "login flow", "Rediss")])
def test_an_unknown_entity_raises_with_suggestions(sample_workspace, ask):
    with pytest.raises(EntityNotFound) as caught:
        ask(sample_workspace)
    assert "Redis" in caught.value.suggestions


# -- the one to_json --------------------------------------------------------------------

@dataclass
class Kept:
    name: str
    note: str | None = None
    items: tuple[int, ...] = ()


@dataclass
class Dropped:
    JSON_DROPS_NONE: ClassVar[bool] = True
    name: str
    note: str | None = None


@dataclass
class Renamed:
    source: str = field(metadata=json_name("from"))
    asked: int = field(default=0, metadata=NOT_IN_JSON)


def test_none_is_null_unless_the_class_drops_it():
    assert to_json(Kept("a")) == {"name": "a", "note": None, "items": []}
    assert to_json(Dropped("a")) == {"name": "a"}
    assert to_json(Dropped("a", "n")) == {"name": "a", "note": "n"}
    assert Why().to_json() == {} and set(Seed("A", "a", "named").to_json()) == {"entity", "key", "source"}
    assert GraphContext().to_json()["impact"] is None  # a graph context keeps every key


def test_order_renames_and_computed_values():
    assert list(to_json(Kept("a"), order=("items",))) == ["items", "name", "note"]
    assert to_json(Renamed("x", asked=3)) == {"from": "x"}
    assert to_json(Kept("a"), note="computed") == {"name": "a", "note": "computed", "items": []}


def test_graph_context_emits_each_fact_once():
    data = GraphContext().to_json()
    assert "survivors" not in data and "failed" not in data
    assert set(data) == {"seeds", "nodes", "triples", "passages", "reading", "entities", "paths", "impact", "communities",
                         "themes", "themes_from"}
