"""Questions read structurally: impact, dependencies, owner, lead, relation, or no reading at all."""

from __future__ import annotations

import pytest

from workbench.retrieve import retrieve
from workbench.retrieve.questions import cue_of

from tests.conftest import chunk_id


@pytest.mark.parametrize("question, cue", [
    ("If Redis goes down, what breaks?", "impact"),
    ("What breaks when the payments database is unavailable?", "impact"),
    ("What does the Quota Service depend on?", "depends"),
    ("Which systems does the billing service use?", "depends"),
    ("What depends on the token cache?", "impact"),
    ("Which services use Kafka?", "impact"),
    ("What does checkout need?", "depends"),
    ("Who owns Redis?", "owner"),
    ("Which team maintains the search service?", "owner"),
    ("Who leads the team that owns the token cache?", "lead"),
    ("Who is the team lead for the billing service?", "lead"),
    ("How is the login flow related to Redis?", None),
    ("Tell me about caching", None),
])
def test_cues(question, cue):
    assert cue_of(question) == cue


def test_who_owns_reads_the_owner_edge_not_a_failure(sample_workspace):
    result = retrieve(sample_workspace, "Who owns Redis?", mode="paths", k=5)
    assert result.graph_context.reading == "owner" and "break" not in result.reason
    assert [p.nodes for p in result.graph_context.paths] == [["Redis", "Platform team"]]
    assert result.hits and result.hits[0].chunk_id == chunk_id(sample_workspace, "teams/ownership.md", "owns Redis")


def test_the_lead_question_follows_ownership_then_leads_each_hop_cited(sample_workspace):
    ws = sample_workspace
    result = retrieve(ws, "Who leads the team that owns the token cache?", mode="paths", k=5)
    assert result.graph_context.reading == "lead"
    path = result.graph_context.paths[0]
    assert path.nodes == ["token cache", "Identity team", "@mara.chen"]
    assert [(h.source, h.relation, h.target) for h in path.hops] == [
        ("token cache", "owned_by", "Identity team"), ("@mara.chen", "leads", "Identity team")]
    ownership = chunk_id(ws, "teams/ownership.md", "owns the token cache")
    leads = chunk_id(ws, "teams/leads.md", "@mara.chen leads the team")
    assert path.hops[0].chunks == (ownership,) and path.hops[1].chunks == (leads,)
    assert [h.chunk_id for h in result.hits[:2]] == [ownership, leads]
    assert all(isinstance(h.weight, int) for h in path.hops)
    assert [h.why.cited_path.hop_number for h in result.hits[:2]] == [1, 2]
    graphrag = retrieve(ws, "Who leads the team that owns the token cache?", mode="graphrag", k=5)
    assert [h.chunk_id for h in graphrag.hits[:2]] == [ownership, leads]


def test_an_unreadable_question_gets_no_walk(sample_workspace):
    result = retrieve(sample_workspace, "Tell me about caching", mode="paths", k=5)
    assert result.mode_used == "hybrid" and "no structural reading" in result.reason
    assert result.hits and result.graph_context.empty


QUOTA_CORPUS = {
    "quota.md": "# Quota Service\n\nThe Quota Service depends on the Rate Limiter and the usage ledger.\n"
                "The Quota Service is owned by the Metering team.\n",
    "limiter.md": "# Rate Limiter\n\nThe Rate Limiter runs on Nomad. The Rate Limiter is maintained by the Edge team.\n",
    "billing.md": "# Billing API\n\nThe Billing API calls the Quota Service before every charge.\n",
    "ledger.md": "# Usage ledger\n\nThe usage ledger is stored in CockroachDB.\n",
}


@pytest.fixture(scope="module")
def quota_workspace(tmp_path_factory, embedder, settings):
    from workbench.workspace import Workspace

    corpus = tmp_path_factory.mktemp("quota") / "quota"
    corpus.mkdir()
    for name, text in QUOTA_CORPUS.items():
        (corpus / name).write_text(text, encoding="utf-8")
    ws = Workspace(tmp_path_factory.mktemp("quota-ws") / "ws", settings=settings, embedder=embedder)
    ws.ingest([corpus])
    yield ws
    ws.close()


def test_what_a_service_depends_on_looks_forward(quota_workspace):
    result = retrieve(quota_workspace, "What does the Quota Service depend on?", mode="paths", k=10)
    assert result.graph_context.reading == "depends"
    reached = {p.nodes[-1] for p in result.graph_context.paths}
    assert {"Rate Limiter", "usage ledger", "Nomad", "CockroachDB"} <= reached
    assert "Billing API" not in reached  # it depends on the Quota Service, not the other way round
    assert all(p.nodes[0] == "Quota Service" for p in result.graph_context.paths)


def test_owner_teams_are_among_the_survivors_of_a_failure(quota_workspace):
    impact = quota_workspace.graph.impacted_by("CockroachDB")
    broken = {name for name, _ in impact.impacted}
    assert {"usage ledger", "Quota Service", "Billing API"} <= broken
    assert {"Metering team", "Edge team", "Rate Limiter", "Nomad"} <= set(impact.survivors)
