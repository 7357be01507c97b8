"""Expansion follows every edge touching a direct hit's note, both ways and from any of its chunks,
says which way it read the edge, and merges the hits by score; ``direct`` is its direct stage."""

from __future__ import annotations

import pytest

from tests.conftest import reopened
from workbench.model import Hop, relation_phrases
from workbench.retrieve import retrieve
from workbench.retrieve.expand import expansion_score

RUNBOOK = "runbooks/kafka-consumer-lag.md"
INCIDENT = "incidents/2024-07-18-report-delay.md"
RUNBOOK_QUESTION = "Step 2: pause the consumer group before raising max.poll.interval.ms"


def test_a_hit_on_the_resolving_note_reaches_the_note_it_resolves(sample_workspace):
    """incident -RESOLVED_BY-> runbook: a hit on the runbook alone reaches the incident, backward."""
    result = retrieve(sample_workspace, RUNBOOK_QUESTION, mode="expand", k=1)
    direct = [h for h in result.hits if h.why.via == "direct"]
    assert len(direct) == 1 and direct[0].document.endswith(RUNBOOK)
    reached = [h for h in result.hits if h.why.via == "expansion" and h.document.endswith(INCIDENT)]
    assert len(reached) == 1
    opening = min((c for c in sample_workspace.chunks() if c.document_id.endswith(INCIDENT)), key=lambda c: c.ordinal)
    assert reached[0].chunk_id == opening.id  # the note's opening chunk: its title and first lines
    why = reached[0].why
    assert why.edge.relation == "RESOLVED_BY" and why.edge.origin == "declared"
    assert why.direction == "backward" and why.reached == why.edge.source
    # The parent is a runbook chunk, not the chunk that declares the relation (the incident's first).
    assert why.parent == direct[0].chunk_id and why.parent not in why.edge.chunks
    sentence = why.describe()
    assert f"followed backward: {why.edge.target} resolves {why.edge.source}" in sentence
    assert f"{why.edge.target} is resolved by" not in sentence  # the reverse never read as the forward


def test_a_hit_on_the_declaring_note_reads_the_edge_forward(sample_workspace):
    result = retrieve(sample_workspace, "Why were the finance reports delayed?", mode="expand", k=5)
    runbook = [h for h in result.hits if h.document.endswith(RUNBOOK)]
    assert runbook and runbook[0].why.via == "expansion" and runbook[0].why.direction == "forward"
    edge = runbook[0].why.edge
    assert f"followed forward: {edge.source} is resolved by {edge.target}" in runbook[0].why.describe()


def test_any_chunk_of_a_note_follows_the_relations_it_declares(tmp_path, make_workspace, settings):
    """A declared relation cites the note's first chunk; a hit on its last chunk follows it too."""
    corpus = tmp_path / "notes"
    corpus.mkdir()
    filler = " ".join(f"Paragraph {i} of the timeline lists checks that found nothing unusual." for i in range(6))
    (corpus / "outage.md").write_text(
        "---\ntitle: Billing outage\nrelations:\n  - {type: RESOLVED_BY, target: restart-guide.md}\n---\n"
        f"# Billing outage\n\nInvoices stopped for an hour.\n\n{filler}\n\n"
        "The root cause was a saturated connection pool in the invoicing worker, exhausted by retries.\n",
        encoding="utf-8")
    (corpus / "restart-guide.md").write_text(
        "---\ntitle: Restart guide\n---\n# Restart guide\n\nHow to restart a worker safely, one node at a time.\n",
        encoding="utf-8")
    (corpus / "lunch.md").write_text("---\ntitle: Lunch menu\n---\n# Lunch menu\n\nSoup and bread on Fridays.\n",
                                     encoding="utf-8")
    chunked = settings.model_copy(deep=True)
    chunked.chunking.max_chars = 200
    ws = make_workspace(settings=chunked)
    ws.ingest([corpus])
    outage = sorted((c for c in ws.chunks() if c.document_id.endswith("outage.md")), key=lambda c: c.ordinal)
    assert len(outage) >= 3
    result = retrieve(ws, "saturated connection pool in the invoicing worker exhausted by retries", mode="expand", k=1)
    assert result.hits[0].chunk_id == outage[-1].id  # the last chunk, not the one citing the relation
    reached = [h for h in result.hits if h.why.via == "expansion" and h.document.endswith("restart-guide.md")]
    assert len(reached) == 1 and reached[0].why.edge.relation == "RESOLVED_BY"
    assert reached[0].why.edge.chunks == (outage[0].id,) and reached[0].why.direction == "forward"


def test_the_merged_list_is_sorted_by_the_discounted_score(sample_workspace):
    result = retrieve(sample_workspace, "How does the login flow work?", mode="expand", k=5)
    by_id = {h.chunk_id: h for h in result.hits}
    expanded = [h for h in result.hits if h.why.via == "expansion"]
    assert expanded and result.stats.direct_hits == 5 and result.stats.expanded_hits == len(expanded)
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)
    for hit in expanded:
        parent = by_id[hit.why.parent]
        assert parent.why.via == "direct"
        assert hit.score == pytest.approx(expansion_score(parent.score, 0.7, hit.why.edge.confidence))
    # Interleaved: some expanded hit outranks some direct hit (0.7 x a strong parent beats a weak one).
    vias = [h.why.via for h in result.hits]
    assert vias.index("expansion") < max(i for i, v in enumerate(vias) if v == "direct")


def test_the_direct_first_variant_keeps_the_expanded_hits_after(sample_workspace):
    ws = reopened(sample_workspace, retrieval__expand_order="direct_first")
    try:
        result = retrieve(ws, "How does the login flow work?", mode="expand", k=5)
    finally:
        ws.close()
    merged = retrieve(sample_workspace, "How does the login flow work?", mode="expand", k=5)
    assert [h.why.via for h in result.hits][:5] == ["direct"] * 5
    assert {h.chunk_id for h in result.hits} == {h.chunk_id for h in merged.hits}  # the same hits, ordered apart


def test_direct_is_exactly_the_direct_stage_of_expand(sample_workspace):
    for query in ("How does the login flow work?", "Why were the finance reports delayed?"):
        direct = retrieve(sample_workspace, query, mode="direct", k=5)
        expand = retrieve(sample_workspace, query, mode="expand", k=5)
        assert len(direct.hits) == 5 and len({h.document for h in direct.hits}) == 5
        assert [(h.chunk_id, h.score) for h in direct.hits] == [
            (h.chunk_id, h.score) for h in sorted((h for h in expand.hits if h.why.via == "direct"),
                                                  key=lambda h: -h.score)]
        assert direct.stats.direct_hits == 5


def test_every_relation_reads_differently_backward_than_forward():
    for relation in ("RESOLVED_BY", "caused_by", "depends_on", "owned_by", "LEADS_TO", "part_of", "mentors"):
        forward, reverse = relation_phrases(relation)
        assert forward != reverse, relation
        hop = Hop("A", relation, "B", 1, ("c1",), ())
        assert hop.reads().startswith("A ") and hop.reads(backward=True).startswith("B ")
    assert Hop("A", "RESOLVED_BY", "B", 1, (), ()).reads(backward=True) == "B resolves A"


def test_an_edge_end_is_resolved_once_per_parent_note_and_as_the_reference_reads_it(make_workspace, tmp_path,
                                                                                     monkeypatch):
    """One long note whose edges lead to the same few ends again and again: each (end, note) is
    looked up once (a 30 MB file's 9,039 edges asked for 2,359 ends 18,082 times, 64 s a query),
    and what it reaches is the chunk the reference reading picks: the first by id among those
    outside the note stating one of the end's relations, else among those mentioning it."""
    import workbench.retrieve.expand as expand
    from workbench.retrieve.cache import indexes_for

    corpus = tmp_path / "notes"
    corpus.mkdir()
    services = ["Auth Service", "Billing Service", "Search API", "Ledger Service"]
    (corpus / "long.md").write_text("\n\n".join(
        f"The {services[i % 4]} depends on Redis and calls the {services[(i + 1) % 4]}." for i in range(120)) + "\n")
    (corpus / "redis.md").write_text("Redis runs on Kubernetes.\n\nThe Ledger Service writes to Redis.\n")
    (corpus / "auth.md").write_text("The Auth Service is owned by the identity team.\n")
    ws = make_workspace()
    ws.ingest([corpus])
    asked: list[tuple[str, str]] = []
    reached = expand._reached
    monkeypatch.setattr(expand, "_reached", lambda ws_, indexes, end, parent: asked.append((end, parent))
                        or reached(ws_, indexes, end, parent))
    result = retrieve(ws, "What does the Billing Service call?", mode="expand", k=3)
    assert asked and len(asked) == len(set(asked))  # each end once per parent note
    assert [h.document for h in result.hits if h.why.via == "expansion"]
    before = len(asked)
    retrieve(ws, "Which services depend on Redis?", mode="expand", k=3)
    assert all(pair not in asked[:before] for pair in asked[before:])  # kept for the next query

    indexes = indexes_for(ws)
    documents = indexes.chunk_documents
    for end, parent in set(asked):
        stating = {c for e in indexes.relation_edges.get(end, ()) for c in e.chunk_ids}
        outside = sorted((c for c in ws.graph.passages.chunks_of.get(end, ()) if documents.get(c) != parent),
                         key=lambda c: (c not in stating, c))
        titled = any(ws.graph.passages.title_of.get(c) == end for c in outside)
        if not titled:  # the reference of the edge ends no note titles
            assert expand.reached_chunks(ws, end, parent) == outside[:1]

    monkeypatch.setattr(expand, "REACHED_KEPT", 3)  # a long-lived server keeps a bounded number
    indexes.reached.clear()
    again = retrieve(ws, "What does the Billing Service call?", mode="expand", k=3)
    assert len(indexes.reached) <= 3 and [h.chunk_id for h in again.hits] == [h.chunk_id for h in result.hits]


def test_expand_follows_relations_only_and_co_mentions_by_setting(sample_workspace):
    """Seed 000 expands over the recorded relations: co-mention edges (confidence 1, so the
    confidence floor never drops them) are followed only with retrieval.expand_comention on, or
    by the expand-comention mode that the evaluation reports as its own row."""
    from workbench.evaluate.tasks import load_resolved_tasks
    from tests.conftest import SAMPLE

    assert sample_workspace.settings.retrieval.expand_comention is False
    questions = [task.question for task in load_resolved_tasks(sample_workspace, SAMPLE / "tasks.yaml")]
    relations = comentions = 0
    for question in questions:
        plain = retrieve(sample_workspace, question, mode="expand", k=5)
        expanded = [h for h in plain.hits if h.why.via == "expansion"]
        assert all(h.why.edge.relation != "co_mentioned" for h in expanded), question
        relations += len(expanded)
        with_comention = retrieve(sample_workspace, question, mode="expand-comention", k=5)
        comentions += sum(h.why.via == "expansion" and h.why.edge.relation == "co_mentioned"
                          for h in with_comention.hits)
    assert relations > 0 and comentions > 0
    ws = reopened(sample_workspace, retrieval__expand_comention=True)
    try:
        on = retrieve(ws, questions[0], mode="expand", k=5)
        assert [(h.chunk_id, h.why.to_json()) for h in on.hits] == [
            (h.chunk_id, h.why.to_json()) for h in retrieve(sample_workspace, questions[0], mode="expand-comention",
                                                            k=5).hits]
    finally:
        ws.close()


RESOLVED_INCIDENT = """---
title: "Incident: invoices stuck in pending"
date: 2024-02-12
relations:
  - {type: RESOLVED_BY, target: pending-invoices.md}
---
In February invoices were stuck in pending for two days: the settlement job stopped and
customers saw pending invoices they had already paid.
"""
PENDING_RUNBOOK = """---
title: Pending invoices runbook
date: 2023-11-20
---
When invoices are stuck in pending, restart the settlement job and replay the payment events of
the last day so that every pending invoice is settled.
"""


@pytest.fixture(scope="module")
def invoices_workspace(tmp_path_factory, embedder, settings):
    from workbench.workspace import Workspace

    corpus = tmp_path_factory.mktemp("invoices")
    (corpus / "2024-02-12-invoices-pending.md").write_text(RESOLVED_INCIDENT, encoding="utf-8")
    (corpus / "pending-invoices.md").write_text(PENDING_RUNBOOK, encoding="utf-8")
    (corpus / "handbook.md").write_text("---\ntitle: Finance handbook\n---\nInvoices are sent on the first day of "
                                        "each month.\n", encoding="utf-8")
    ws = Workspace(tmp_path_factory.mktemp("ws") / "ws", settings=settings, embedder=embedder)
    ws.ingest([corpus])
    yield ws
    ws.close()


def test_a_direct_hit_that_a_higher_hit_relates_to_says_the_relation(invoices_workspace):
    result = retrieve(invoices_workspace, "Why were invoices stuck in pending?", mode="expand", k=3)
    documents = [hit.document.rsplit("/", 1)[-1] for hit in result.hits]
    assert documents[:2] == ["2024-02-12-invoices-pending.md", "pending-invoices.md"], documents
    incident, runbook = result.hits[:2]
    assert runbook.why.via == "direct" and runbook.why.parent == incident.chunk_id
    assert runbook.why.edge.relation == "RESOLVED_BY" and runbook.why.direction == "forward"
    assert "also the end of a relation from chunk" in runbook.why.describe()
    assert "is resolved by" in runbook.why.describe()
    assert incident.why.parent is None  # nothing above it leads to it


def test_a_relation_from_a_hit_in_the_window_keeps_its_target_dated_before_it(invoices_workspace):
    question = "Why were invoices stuck in pending in February?"
    result = retrieve(invoices_workspace, question, mode="expand", k=3, as_of="2024-07-01")
    documents = [hit.document.rsplit("/", 1)[-1] for hit in result.hits]
    assert documents == ["2024-02-12-invoices-pending.md", "pending-invoices.md"], documents
    runbook = result.hits[1]
    assert runbook.time.startswith("2023-11-20")
    assert runbook.why.kept_by_window.startswith("dated 2023-11-20, outside the time window, kept after")
    assert "is resolved by" in runbook.why.kept_by_window and "is resolved by" in runbook.why.describe()
    assert result.stats.time_window.outside_kept == 1 and result.stats.time_window.in_window == 1
    assert "1 dated outside it kept after them" in result.reason
    # A mode that follows no relation finds the runbook by itself, if at all: the window keeps it out.
    hybrid = retrieve(invoices_workspace, question, mode="hybrid", k=3, as_of="2024-07-01")
    assert [hit.document.rsplit("/", 1)[-1] for hit in hybrid.hits] == ["2024-02-12-invoices-pending.md"]
    assert not hybrid.stats.time_window.outside_kept
