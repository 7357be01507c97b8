"""A question reaches the entities it names in part: the seed's research scenario, where "the
Stanford gene therapy trial" stands for the "Stanford Retinal Gene Therapy Trial Phase II"."""

from __future__ import annotations

import shutil

import pytest

from workbench.retrieve import retrieve
from workbench.retrieve.partial_names import holds_in_order, phrases

from tests.conftest import ROOT

RELATE = "How does Chen's CRISPR work relate to the Stanford gene therapy trial?"
FUNDS = "Which grant funds the Stanford gene therapy trial?"
TRIAL = "Stanford Retinal Gene Therapy Trial Phase II"


@pytest.fixture(scope="module")
def grant_workspace(tmp_path_factory, embedder, settings):
    from workbench.workspace import Workspace

    corpus = tmp_path_factory.mktemp("corpus") / "grant_corpus"
    shutil.copytree(ROOT / "tests" / "data" / "grant_corpus", corpus)
    ws = Workspace(tmp_path_factory.mktemp("ws") / "ws", settings=settings, embedder=embedder)
    ws.ingest([corpus])
    yield ws
    ws.close()


def _documents(result) -> list[str]:
    return list(dict.fromkeys(hit.document.rsplit("/", 1)[-1] for hit in result.hits))


def test_a_phrase_names_what_holds_its_words_in_order():
    assert phrases(FUNDS, [(21, 29)]) == ["Stanford gene therapy trial"]
    assert holds_in_order("stanford gene therapy trial", TRIAL.casefold())
    assert not holds_in_order("stanford gene therapy trial", "stanford cardiac statin trial phase iii")
    assert not holds_in_order("trial stanford", TRIAL.casefold())  # the order counts


@pytest.mark.parametrize("question", [RELATE, FUNDS])
def test_the_trial_named_in_part_is_a_named_seed_and_leads(grant_workspace, question):
    result = retrieve(grant_workspace, question, mode="graphrag", k=5)
    assert result.mode_used == "full_graphrag"
    named = {seed.entity for seed in result.stats.seeds if seed.source == "named"}
    assert TRIAL in named and "Stanford Cardiac Statin Trial Phase III" not in named
    documents = _documents(result)
    assert documents[0] == "stanford-retinal-trial.md"
    assert documents.index("stanford-cardiac-trial.md") > documents.index("okafor-vision-grant.md")


def test_the_paper_the_trial_cites_and_the_grant_that_funds_it_follow_the_trial(grant_workspace):
    graphrag = retrieve(grant_workspace, RELATE, mode="graphrag", k=5)
    assert set(_documents(graphrag)[:3]) == {"stanford-retinal-trial.md", "chen-crispr-paper.md",
                                              "okafor-vision-grant.md"}
    vector = retrieve(grant_workspace, RELATE, mode="vector", k=5)
    assert _documents(vector)[:3] != _documents(graphrag)[:3]  # what the graph adds: the grant, not the overview


def test_with_partial_names_off_only_names_written_whole_are_seeds(grant_workspace):
    from tests.conftest import reopened

    whole_only = reopened(grant_workspace, graphrag__partial_names=False)
    try:
        result = retrieve(whole_only, FUNDS, mode="graphrag", k=5)
        assert TRIAL not in {seed.entity for seed in result.stats.seeds if seed.source == "named"}
    finally:
        whole_only.close()
