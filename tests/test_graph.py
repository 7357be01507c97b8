"""ContextGraph: resolution, neighbourhoods, impact with survivors, ranked paths, PageRank."""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.context_graph.graph import DEFAULT_IMPACT_RELATIONS, ContextGraph, EntityNotFound
from workbench.model import Edge, Entity


def entity(name: str, **kwargs) -> Entity:
    return Entity(key=name.lower().replace(" ", ""), name=name, **kwargs)


def edge(source: str, relation: str, target: str, *chunks: str, documents: tuple[str, ...] = ()) -> Edge:
    return Edge(
        source=source.lower().replace(" ", ""),
        relation=relation,
        target=target.lower().replace(" ", ""),
        chunk_ids=tuple(chunks),
        documents=documents,
    )


NAMES = ["login flow", "auth service", "token cache", "Redis", "search service", "Elasticsearch",
         "billing service", "Alice"]


@pytest.fixture
def services() -> ContextGraph:
    """login flow -> auth service -> token cache -> Redis; search service -> Elasticsearch."""
    return ContextGraph(
        [entity(n, type="service") for n in NAMES],
        [
            edge("login flow", "depends_on", "auth service", "c1", "c2", documents=("docs/login.md",)),
            edge("auth service", "depends_on", "token cache", "c3", documents=("docs/auth.md",)),
            edge("token cache", "backed_by", "Redis", "c4", "c5", "c6", documents=("docs/cache.md", "docs/ops.md")),
            edge("search service", "depends_on", "Elasticsearch", "c7", documents=("docs/search.md",)),
            edge("auth service", "owned_by", "Alice", "c3"),
            edge("billing service", "co_mentioned", "Redis", "c8"),
        ],
    )


# -- construction and lookup ---------------------------------------------------------------

def test_nodes_carry_entities_and_edges_are_keyed_by_relation(services):
    assert len(services) == len(NAMES)
    assert services.nx.nodes["redis"]["entity"].name == "Redis"
    data = services.nx.edges["tokencache", "redis", "backed_by"]
    assert data["weight"] == 3 and data["edge"].chunk_ids == ("c4", "c5", "c6")


def test_edges_leave_out_comention_unless_asked(services):
    assert all(e.relation != "co_mentioned" for e in services.edges())
    assert len(services.edges()) == 5
    assert len(services.edges(include_comention=True)) == services.number_of_edges() == 6
    assert [e.source for e in services.edges(relation="co_mentioned")] == ["billingservice"]
    assert [e.target for e in services.edges(relation="depends_on")] == ["authservice", "tokencache", "elasticsearch"]


def test_edge_to_unknown_entity_is_rejected():
    with pytest.raises(ValueError, match="not an entity"):
        ContextGraph([entity("A")], [edge("A", "uses", "B")])


def test_duplicate_edge_is_rejected():
    with pytest.raises(ValueError, match="given twice"):
        ContextGraph([entity("A"), entity("B")], [edge("A", "uses", "B", "c1"), edge("A", "uses", "B", "c2")])


def test_duplicate_entity_key_is_rejected_naming_the_second_one():
    with pytest.raises(ValueError, match="entity key 'a' given twice \\('A again'\\)"):
        ContextGraph([Entity("a", "A"), Entity("b", "B"), Entity("a", "A again")], [])


@pytest.mark.parametrize("written", ["auth service", "The Auth-Service", "AuthService", "AUTH_SERVICE", "authservice"])
def test_resolve_folds_the_ways_a_name_is_written(services, written):
    assert services.resolve(written) == "authservice"


def test_resolve_finds_a_display_name_whose_key_differs():
    graph = ContextGraph([Entity("pg", "PostgreSQL")], [])
    assert graph.resolve("postgresql") == "pg"


def test_resolve_tries_the_canonicalizer_key_first():
    aliases = {"postgres": "pg"}
    graph = ContextGraph([Entity("pg", "PostgreSQL")], [], key_of=lambda n: aliases.get(n.lower(), n.lower()))
    assert graph.resolve("Postgres") == "pg"


def test_unknown_entity_suggests_near_names(services):
    with pytest.raises(EntityNotFound) as caught:
        services.resolve("redsi")
    assert isinstance(caught.value, KeyError)
    assert caught.value.suggestions[0] == "Redis"
    assert "did you mean: Redis" in str(caught.value)


def test_unknown_entity_suggests_names_containing_it(services):
    with pytest.raises(EntityNotFound) as caught:
        services.resolve("service")
    assert {"auth service", "search service", "billing service"} <= set(caught.value.suggestions)
    assert len(caught.value.suggestions) <= 10


def test_unknown_entity_without_near_names_says_how_to_find_names(services):
    with pytest.raises(EntityNotFound, match="list the entities") as caught:
        services.resolve("zzzzqqq")
    assert caught.value.suggestions == []


def test_entity_and_name_by_key(services):
    assert services.entity("redis").type == "service"
    assert services.name("tokencache") == "token cache"
    with pytest.raises(EntityNotFound):
        services.entity("nothing")


# -- neighbourhoods -----------------------------------------------------------------------

def test_one_hop_out_follows_stored_direction(services):
    hood = services.neighbors("auth service")
    assert hood.center == "auth service"
    assert hood.entities == [("Alice", 1), ("token cache", 1)]
    assert {(e.source, e.relation, e.target) for e in hood.edges} == {
        ("authservice", "depends_on", "tokencache"), ("authservice", "owned_by", "alice")}


def test_two_hops_out_reach_the_backing_store(services):
    hood = services.neighbors("auth service", hops=2, relations=DEFAULT_IMPACT_RELATIONS)
    assert hood.entities == [("token cache", 1), ("Redis", 2)]
    assert [(e.source, e.relation) for e in hood.edges] == [("authservice", "depends_on"), ("tokencache", "backed_by")]
    assert set(hood.keys) == {"authservice", "tokencache", "redis"}


def test_in_direction_walks_edges_backwards(services):
    hood = services.neighbors("Redis", hops=3, direction="in")
    assert hood.entities == [("token cache", 1), ("auth service", 2), ("login flow", 3)]


def test_both_directions_and_comention_on_request(services):
    assert services.neighbors("Redis", direction="both").entities == [("token cache", 1)]
    with_comention = services.neighbors("Redis", direction="both", include_comention=True)
    assert with_comention.entities == [("billing service", 1), ("token cache", 1)]
    assert services.neighbors("token cache", hops=2, direction="both").entities == [
        ("auth service", 1), ("Redis", 1), ("Alice", 2), ("login flow", 2)]


def test_zero_hops_is_just_the_center(services):
    hood = services.neighbors("Redis", hops=0)
    assert hood.entities == [] and hood.edges == [] and hood.keys == ["redis"]


def test_bad_direction_is_an_error(services):
    with pytest.raises(ValueError, match="direction"):
        services.neighbors("Redis", direction="up")


# -- impact -------------------------------------------------------------------------------

def test_impact_follows_the_chain_in_hop_order(services):
    impact = services.impacted_by("redis")
    assert impact.failed == "Redis"
    assert [name for name, _ in impact.impacted] == ["token cache", "auth service", "login flow"]
    _, path = impact.impacted[-1]
    assert path.nodes == ["Redis", "token cache", "auth service", "login flow"]


def test_impact_hops_keep_stored_direction_and_citations(services):
    _, path = services.impacted_by("Redis").impacted[-1]
    assert [(h.source, h.relation, h.target) for h in path.hops] == [
        ("token cache", "backed_by", "Redis"),
        ("auth service", "depends_on", "token cache"),
        ("login flow", "depends_on", "auth service"),
    ]
    assert path.hops[0].chunks == ("c4", "c5", "c6")
    assert path.hops[0].documents == ("docs/cache.md", "docs/ops.md")
    assert [h.weight for h in path.hops] == [3, 1, 2]
    assert path.corroboration == 1


def test_impact_lists_survivors(services):
    # Every entity of the relation graph the failure does not reach survives: Alice, who owns
    # something (owned_by is no impact edge), too; billing service is co-mentioned only.
    assert services.impacted_by("Redis").survivors == ["Alice", "Elasticsearch", "search service"]
    assert services.impacted_by("auth service").survivors == [
        "Alice", "Elasticsearch", "Redis", "search service", "token cache"]


def test_impact_ignores_comention(services):
    impacted = [name for name, _ in services.impacted_by("Redis").impacted]
    assert "billing service" not in impacted


def test_impact_spreads_along_every_relation_by_default_as_seed_001s_impacted_by(services):
    # auth service -owned_by-> Alice: owned_by is no dependency, yet seed 001 walks every reversed edge.
    every = services.impacted_by("Alice")
    assert [name for name, _ in every.impacted] == ["auth service", "login flow"] and every.relations == "all"
    assert every.impacted[-1][1].nodes == ["Alice", "auth service", "login flow"]
    dependencies = services.impacted_by("Alice", relations=DEFAULT_IMPACT_RELATIONS)
    assert dependencies.impacted == [] and dependencies.relations == "dependencies"
    assert "billing service" not in [name for name, _ in services.impacted_by("Redis").impacted]  # co-mention aside


def test_impact_relations_can_be_narrowed(services):
    impact = services.impacted_by("Redis", relations=["depends_on"])
    assert impact.impacted == []
    assert "token cache" in impact.survivors


def test_impact_of_a_leaf_dependent_is_empty(services):
    impact = services.impacted_by("login flow")
    assert impact.impacted == []
    assert "login flow" not in impact.survivors


def test_impact_orders_same_distance_by_name():
    graph = ContextGraph(
        [entity(n) for n in ["db", "b worker", "A api"]],
        [edge("b worker", "uses", "db", "c1"), edge("A api", "uses", "db", "c2")],
    )
    assert [name for name, _ in graph.impacted_by("db").impacted] == ["A api", "b worker"]


def test_impact_path_ties_go_to_better_corroboration_then_name():
    graph = ContextGraph(
        [entity(n) for n in ["app", "x", "y", "db"]],
        [
            edge("app", "depends_on", "x", "c1"),
            edge("app", "depends_on", "y", "c2", "c3", "c4"),
            edge("x", "depends_on", "db", "c5", "c6"),
            edge("y", "depends_on", "db", "c7", "c8"),
        ],
    )
    path = dict(graph.impacted_by("db").impacted)["app"]
    assert path.nodes == ["db", "y", "app"]
    even = ContextGraph(
        [entity(n) for n in ["app", "x", "y", "db"]],
        [edge("app", "uses", "y", "c1"), edge("app", "uses", "x", "c2"),
         edge("x", "uses", "db", "c3"), edge("y", "uses", "db", "c4")],
    )
    assert dict(even.impacted_by("db").impacted)["app"].nodes == ["db", "x", "app"]


def hop_json(source: str, relation: str, target: str, weight: int, chunks: list[str], documents: list[str]) -> dict:
    """A cited edge's JSON form, the extraction fields at their defaults."""
    return {"source": source, "relation": relation, "target": target, "weight": weight, "confidence": 1.0,
            "origin": "pattern", "first_seen": None, "last_seen": None, "chunks": chunks, "documents": documents}


def test_impact_json_has_the_printed_shape(services):
    data = services.impacted_by("token cache").to_json()
    assert data == {
        "failed": "token cache",
        "impacted": [
            {"entity": "auth service", "path": ["token cache", "auth service"], "hops": [
                hop_json("auth service", "depends_on", "token cache", 1, ["c3"], ["docs/auth.md"])]},
            {"entity": "login flow", "path": ["token cache", "auth service", "login flow"], "hops": [
                hop_json("auth service", "depends_on", "token cache", 1, ["c3"], ["docs/auth.md"]),
                hop_json("login flow", "depends_on", "auth service", 2, ["c1", "c2"], ["docs/login.md"])]},
        ],
        "survivors": ["Alice", "Elasticsearch", "Redis", "search service"],
        "relations": "all",
    }


@settings(max_examples=40, deadline=None)
@given(st.lists(
    st.tuples(st.integers(0, 7), st.sampled_from(["depends_on", "uses", "owned_by", "co_mentioned"]),
              st.integers(0, 7), st.integers(1, 3)),
    max_size=20,
))
def test_impact_is_reverse_reachability_by_shortest_paths(raw_edges):
    entities = [Entity(f"n{i}", f"N{i}") for i in range(8)]
    edges = {(f"n{s}", r, f"n{t}"): Edge(f"n{s}", r, f"n{t}", chunk_ids=tuple(f"c{j}" for j in range(w)))
             for s, r, t, w in raw_edges if s != t}
    graph = ContextGraph(entities, edges.values())
    for relations in (None, DEFAULT_IMPACT_RELATIONS):  # every relation (the default), the dependency reading
        _check_reverse_reachability(graph, entities, edges.values(), relations)


def _check_reverse_reachability(graph, entities, edges, relations) -> None:
    spread = nx.DiGraph()
    spread.add_nodes_from(e.key for e in entities)
    spread.add_edges_from((e.source, e.target) for e in edges
                          if (e.relation != "co_mentioned" if relations is None else e.relation in relations))
    impact = graph.impacted_by("n0", relations)
    impacted = {name: path for name, path in impact.impacted}
    assert set(impacted) == {f"N{k[1:]}" for k in nx.ancestors(spread, "n0")}
    for name, path in impacted.items():
        assert len(path.hops) == nx.shortest_path_length(spread, f"n{name[1:]}", "n0")
        assert path.nodes[0] == "N0" and path.nodes[-1] == name
        for i, hop in enumerate(path.hops):
            assert (hop.source, hop.target) == (path.nodes[i + 1], path.nodes[i])
    assert not set(impact.survivors) & (set(impacted) | {"N0"})
    assert [len(p.hops) for _, p in impact.impacted] == sorted(len(p.hops) for _, p in impact.impacted)


# -- paths --------------------------------------------------------------------------------

@pytest.fixture
def routes() -> ContextGraph:
    """gateway reaches db directly (weight 1), via a (3, 3) and via b (1, 5)."""
    return ContextGraph(
        [entity(n) for n in ["gateway", "a", "b", "db"]],
        [
            edge("gateway", "calls", "db", "c1"),
            edge("gateway", "routes_to", "a", "c2", "c3", "c4"),
            edge("a", "calls", "db", "c5", "c6", "c7"),
            edge("gateway", "routes_to", "b", "c8"),
            edge("b", "calls", "db", "c9", "c10", "c11", "c12", "c13"),
        ],
    )


def test_paths_rank_by_corroboration_then_length(routes):
    paths = routes.paths("gateway", "db")
    assert [p.nodes for p in paths] == [["gateway", "a", "db"], ["gateway", "db"], ["gateway", "b", "db"]]
    assert [p.corroboration for p in paths] == [3, 1, 1]


def test_paths_respect_k_and_max_hops(routes):
    assert len(routes.paths("gateway", "db", k=1)) == 1
    assert [p.nodes for p in routes.paths("gateway", "db", max_hops=1)] == [["gateway", "db"]]


def test_paths_at_equal_corroboration_and_length_prefer_more_total_weight():
    graph = ContextGraph(
        [entity(n) for n in ["s", "p", "q", "t"]],
        [edge("s", "uses", "p", "c1"), edge("p", "uses", "t", "c2"),
         edge("s", "uses", "q", "c3"), edge("q", "uses", "t", "c4", "c5", "c6")],
    )
    assert [p.nodes for p in graph.paths("s", "t")] == [["s", "q", "t"], ["s", "p", "t"]]


def test_paths_walk_backwards_only_when_no_forward_path(services):
    paths = services.paths("Redis", "login flow")
    assert [p.nodes for p in paths] == [["Redis", "token cache", "auth service", "login flow"]]
    assert [(h.source, h.target) for h in paths[0].hops] == [
        ("token cache", "Redis"), ("auth service", "token cache"), ("login flow", "auth service")]
    assert services.paths("login flow", "Redis")[0].nodes == ["login flow", "auth service", "token cache", "Redis"]


def test_paths_pick_the_best_corroborated_relation_between_two_entities():
    graph = ContextGraph(
        [entity("a"), entity("b")],
        [edge("a", "uses", "b", "c1"), edge("a", "calls", "b", "c2", "c3")],
    )
    (path,) = graph.paths("a", "b")
    assert path.hops[0].relation == "calls" and path.corroboration == 2


def test_paths_never_walk_comention(services):
    assert services.paths("billing service", "Redis") == []


def test_paths_with_unknown_entity_raise(services):
    with pytest.raises(EntityNotFound):
        services.paths("login flow", "no such thing")


def test_path_json_cites_every_hop(routes):
    data = routes.paths("gateway", "db")[0].to_json()
    assert data["nodes"] == ["gateway", "a", "db"]
    assert data["corroboration"] == 3
    assert data["hops"][1] == hop_json("a", "calls", "db", 3, ["c5", "c6", "c7"], [])


def test_every_edge_leaves_the_graph_in_one_json_shape(services):
    edge = services.nx.edges["tokencache", "redis", "backed_by"]["edge"]
    shape = services.cited_hop(edge).to_json()
    assert shape == hop_json("token cache", "backed_by", "Redis", 3, ["c4", "c5", "c6"], ["docs/cache.md", "docs/ops.md"])
    assert shape in services.to_json()["edges"]


# -- PageRank and views -------------------------------------------------------------------

def test_pagerank_sums_to_one_and_favours_seed_neighbours(services):
    scores = services.personalized_pagerank({"authservice": 1.0})
    assert sum(scores.values()) == pytest.approx(1.0)
    assert set(scores) == {e.key for e in services.entities()}
    assert max(scores, key=scores.get) == "authservice"
    # One hop away beats three hops away, which beats another component.
    for near in ("loginflow", "tokencache", "alice"):
        assert scores[near] > scores["billingservice"] > scores["elasticsearch"]


def test_pagerank_walks_comention_edges(services):
    scores = services.personalized_pagerank({"redis": 1.0})
    assert scores["billingservice"] > scores["searchservice"]


def test_pagerank_matches_networkx_on_the_weighted_undirected_projection(routes):
    projection = nx.Graph()
    projection.add_nodes_from(routes.nx)
    for e in routes.edges(include_comention=True):
        projection.add_edge(e.source, e.target, weight=e.weight)
    expected = nx.pagerank(projection, alpha=0.7, personalization={"a": 1.0})
    actual = routes.personalized_pagerank({"a": 1.0}, damping=0.7)
    assert max(abs(actual[n] - expected[n]) for n in expected) < 1e-6


def test_pagerank_index_is_built_once(services):
    assert services.pagerank_index() is services.pagerank_index()


def test_subgraph_keeps_edges_between_kept_entities(services):
    sub = services.subgraph(["loginflow", "authservice", "alice"])
    assert len(sub) == 3
    assert {(e.source, e.relation, e.target) for e in sub.edges()} == {
        ("loginflow", "depends_on", "authservice"), ("authservice", "owned_by", "alice")}
    with pytest.raises(EntityNotFound):
        services.subgraph(["nothing"])


def test_to_json_gives_nodes_and_cited_edges_with_display_names(services):
    data = services.to_json()
    assert {n["name"] for n in data["nodes"]} == set(NAMES)
    assert set(data["nodes"][0]) == {"key", "name", "type", "mentions", "first_seen", "last_seen"}
    backed = next(e for e in data["edges"] if e["relation"] == "backed_by")
    assert backed == {
        "source": "token cache", "relation": "backed_by", "target": "Redis", "weight": 3,
        "chunks": ["c4", "c5", "c6"], "documents": ["docs/cache.md", "docs/ops.md"],
        "confidence": 1.0, "first_seen": None, "last_seen": None, "origin": "pattern",
    }
    assert len(data["edges"]) == 6


def test_edges_and_incident_edges_come_in_the_order_networkx_walks_them(services):
    graph = services.nx
    assert services.edges(include_comention=True) == [e for _, _, e in graph.edges(data="edge")]
    for key in graph:
        assert services.out_edges(key) == [e for _, _, e in graph.out_edges(key, data="edge")]
        assert services.in_edges(key) == [e for _, _, e in graph.in_edges(key, data="edge")]
    assert services.keys() == list(graph) and services.number_of_edges() == graph.number_of_edges()


def test_edge_order_matches_networkx_on_a_random_multigraph():
    import random

    rng = random.Random(3)
    keys = [f"k{i}" for i in range(30)]
    triples = {(rng.choice(keys), rng.choice(["uses", "calls", "co_mentioned"]), rng.choice(keys)) for _ in range(200)}
    edges = [Edge(s, r, t, chunk_ids=(f"c{i}",)) for i, (s, r, t) in enumerate(sorted(triples)) if s != t]
    rng.shuffle(edges)
    graph = ContextGraph([Entity(k, k.upper()) for k in rng.sample(keys, len(keys))], edges)
    assert graph.edges(include_comention=True) == [e for _, _, e in graph.nx.edges(data="edge")]
    assert all(graph.in_edges(k) == [e for _, _, e in graph.nx.in_edges(k, data="edge")] for k in keys)
    assert all(graph.out_edges(k) == [e for _, _, e in graph.nx.out_edges(k, data="edge")] for k in keys)
