"""Graph assembly: canonical entities and cited edges from stored mentions and triples."""

from __future__ import annotations

from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.context_graph.assemble import assemble_graph, note_resolver
from workbench.context_graph.canon import Canonicalizer
from workbench.text.name_keys import name_key
from workbench.model import DeclaredRelation, Mention, Triple
from workbench.record.store import DocumentRecord

NAMES = ["The Auth Service", "auth-service", "AuthService", "token cache", "Token Cache", "Redis", "redis", "login flow"]
RELATIONS = ["depends_on", "backed_by", "uses"]
CHUNKS = [f"c{i}" for i in range(6)]
CONTEXT = {c: (f"doc{int(c[1:]) % 3}.md", f"2024-05-0{int(c[1:]) + 1}") for c in CHUNKS}

triples_strategy = st.lists(
    st.builds(Triple, subject=st.sampled_from(NAMES), relation=st.sampled_from(RELATIONS),
              object=st.sampled_from(NAMES), chunk_id=st.sampled_from(CHUNKS)),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(triples_strategy)
def test_edge_weight_equals_its_distinct_source_chunks(triples):
    graph = assemble_graph([], triples, CONTEXT, Canonicalizer())
    expected: dict[tuple, set] = defaultdict(set)
    for t in triples:
        s, o = name_key(t.subject), name_key(t.object)
        if s != o:
            expected[(s, t.relation, o)].add(t.chunk_id)
    edges = {(e.source, e.relation, e.target): e for e in graph.edges_as_given()}
    assert edges.keys() == expected.keys()
    for key, edge in edges.items():
        assert edge.weight == len(expected[key])
        assert edge.chunk_ids == tuple(sorted(expected[key]))
        assert edge.documents == tuple(sorted({CONTEXT[c][0] for c in expected[key]}))
        assert edge.first_seen == min(CONTEXT[c][1] for c in expected[key])
        assert edge.last_seen == max(CONTEXT[c][1] for c in expected[key])


def test_display_name_is_the_most_frequent_surface_form():
    mentions = [Mention("auth service", "c1"), Mention("auth service", "c2"), Mention("AuthService", "c3"),
                Mention("The Auth Service", "c4")]
    graph = assemble_graph(mentions, [], CONTEXT, Canonicalizer())
    assert graph.entity("authservice").name == "auth service"
    assert graph.entity("authservice").mentions == 4


def test_declared_relation_targets_resolve_to_the_note_they_name():
    docs = [DocumentRecord("notes/outage.md", "/x/outage.md", "Login outage", "markdown", "h", "2024-05-02", (),
                           (DeclaredRelation("RESOLVED_BY", "fix.md"),)),
            DocumentRecord("notes/fix.md", "/x/fix.md", "Short token timeouts", "markdown", "h", "2024-05-03", (), ())]
    triples = [Triple("Login outage", "RESOLVED_BY", "fix.md", "c1", origin="declared",
                      subject_type="note", object_type="note")]
    graph = assemble_graph([], triples, CONTEXT, Canonicalizer(), notes=note_resolver(docs))
    (edge,) = graph.edges_as_given()
    assert (graph.name(edge.source), edge.relation, graph.name(edge.target)) == \
        ("Login outage", "RESOLVED_BY", "Short token timeouts")


def test_user_alias_merges_endpoints_into_one_node():
    triples = [Triple("billing service", "backed_by", "Postgres", "c1"),
               Triple("ledger", "backed_by", "PostgreSQL", "c2")]
    graph = assemble_graph([], triples, CONTEXT, Canonicalizer(user_aliases={"Postgres": "PostgreSQL"}))
    assert {e.target for e in graph.edges_as_given()} == {"postgresql"}
    assert graph.resolve("Postgres") == "postgresql"
