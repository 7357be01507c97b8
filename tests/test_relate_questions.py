"""Questions of the form "how does X's work relate to Y": read in full_graphrag as a chain of
documents joined by the names they share, ranked ahead of vector search's, the chain in the context."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import ROOT
from workbench.retrieve import retrieve
from workbench.retrieve.questions import relate_sides

DATA = ROOT / "tests" / "data"
GENE_QUESTION = "How does Chen's CRISPR work relate to the Stanford gene therapy trial?"
GENE_CHAIN = ["chen-helix-study.md", "helix-licence.md", "edit-scd-trial.md"]


@pytest.mark.parametrize("question, sides", [
    (GENE_QUESTION, ("Chen's CRISPR work", "the Stanford gene therapy trial")),
    ("How is the Auth Service connected to Redis?", ("the Auth Service", "Redis")),
    ("How are ARIEL and BREATHE-2 related?", ("ARIEL", "BREATHE-2")),
    ("What is the relationship between the grant and the trial?", ("the grant", "the trial")),
    ("If Redis goes down, what breaks?", None),
    ("What did we decide about the session store?", None),
])
def test_relate_questions_are_read_into_their_two_sides(question, sides):
    assert relate_sides(question) == sides


def workspace_of(folder, tmp_path_factory, embedder, settings):
    from workbench.workspace import Workspace

    corpus = tmp_path_factory.mktemp("corpus") / folder
    shutil.copytree(DATA / folder, corpus)
    ws = Workspace(tmp_path_factory.mktemp("ws") / "ws", settings=settings, embedder=embedder)
    ws.ingest([corpus])
    return ws


@pytest.fixture(scope="module")
def gene_workspace(tmp_path_factory, embedder, settings):
    ws = workspace_of("relate_corpus", tmp_path_factory, embedder, settings)
    yield ws
    ws.close()


@pytest.fixture(scope="module")
def research_workspace(tmp_path_factory, embedder, settings):
    ws = workspace_of("research_corpus", tmp_path_factory, embedder, settings)
    yield ws
    ws.close()


def first_ranks(result) -> dict[str, int]:
    ranks: dict[str, int] = {}
    for hit in result.hits:
        ranks.setdefault(hit.document.rsplit("/", 1)[-1], hit.rank)
    return ranks


def test_chens_work_and_the_stanford_trial_are_joined_by_the_licence(gene_workspace):
    graphrag = retrieve(gene_workspace, GENE_QUESTION, mode="graphrag", k=5)
    vector = retrieve(gene_workspace, GENE_QUESTION, mode="vector", k=5)
    assert graphrag.mode_used == "full_graphrag" and graphrag.graph_context.reading == "relate"
    assert [hit.document.rsplit("/", 1)[-1] for hit in graphrag.hits[:3]] == GENE_CHAIN
    assert all(hit.why.cited_path is not None for hit in graphrag.hits[:3])
    mine, theirs = first_ranks(graphrag), first_ranks(vector)
    assert set(GENE_CHAIN) <= set(mine)
    recall = {name: sum(doc in ranks for doc in GENE_CHAIN) / 3 for name, ranks in (("graphrag", mine), ("vector", theirs))}
    assert recall["graphrag"] == 1.0 and recall["graphrag"] >= recall["vector"]
    assert all(mine[doc] <= theirs.get(doc, 99) for doc in GENE_CHAIN)
    on_chain = {name for path in graphrag.graph_context.paths for name in path.nodes}
    assert {"HELIX", "EDIT-SCD gene therapy trial"} <= on_chain  # the study's editor and the trial
    assert "relate question" in graphrag.reason


def test_chens_study_relates_to_the_trial_that_builds_on_it(research_workspace):
    result = retrieve(research_workspace, "How does Chen's ARIEL work relate to the BREATHE-2 trial?", mode="graphrag", k=5)
    assert result.mode_used == "full_graphrag" and result.graph_context.reading == "relate"
    documents = [hit.document.rsplit("/", 1)[-1] for hit in result.hits]
    assert documents[:2] == ["chen-2019-ariel-study.md", "breathe-2-trial.md"]
    on_chain = {name for path in result.graph_context.paths for name in path.nodes}
    assert "ARIEL" in on_chain and any("BREATHE-2" in name for name in on_chain)
