"""One context graph: general names, passages in the walk, and user corrections that retrieval follows."""

from __future__ import annotations

import ast
import shutil

import pytest

from workbench.context_graph.assemble import assemble_graph
from workbench.context_graph.canon import Canonicalizer
from workbench.model import Mention
from workbench.retrieve import retrieve

from tests.conftest import ROOT, reopened

RESEARCH = ROOT / "tests" / "data" / "research_corpus"
QUESTION = "How does Sarah Chen's work relate to the BREATHE-2 trial?"


@pytest.fixture(scope="module")
def research_workspace(tmp_path_factory, embedder, settings):
    from workbench.workspace import Workspace

    corpus = tmp_path_factory.mktemp("research") / "research_corpus"
    shutil.copytree(RESEARCH, corpus)
    ws = Workspace(tmp_path_factory.mktemp("research-ws") / "ws", settings=settings, embedder=embedder)
    ws.ingest([corpus])
    yield ws
    ws.close()


def test_plain_research_prose_gives_entities_for_people_studies_trials_and_grants(research_workspace):
    types = {e.name: e.type for e in research_workspace.entities()}
    for person in ("Sarah Chen", "Tomas Berg", "Ingrid Solberg", "Daniel Okoro"):
        assert types.get(person) == "name", person
    for titled in ("ARIEL study", "BREATHE-2 trial", "Grant NF-4471", "ATLAS trial"):
        assert types.get(titled) == "title", titled
    assert types.get("Nordic Fibrosis Foundation") == "name"
    assert types.get("2019") == "date"
    # Honorifics, list joins and ids are not names of their own.
    assert not {"Dr", "Norway and Sweden", "4471"} & set(types)


def test_graphrag_links_a_paper_to_the_trial_and_the_grant_that_funds_it(research_workspace):
    result = retrieve(research_workspace, QUESTION, mode="graphrag", k=5)
    assert result.mode_used == "full_graphrag"
    documents = {h.document.rsplit("/", 1)[-1] for h in result.hits}
    assert {"chen-2019-ariel-study.md", "breathe-2-trial.md", "grant-nf-4471.md"} <= documents
    named = {s.entity for s in result.graph_context.seeds if s.source == "named"}
    assert {"Sarah Chen", "BREATHE-2 trial"} <= named
    context = {n.name for n in result.graph_context.nodes}
    assert {"ARIEL study", "BREATHE-2 trial", "Grant NF-4471"} <= context


def test_dense_retrieval_alone_misses_the_grant(research_workspace):
    """The grant never names Sarah Chen: only the walk (grant -> trial title -> trial) finds it."""
    vector = retrieve(research_workspace, QUESTION, mode="vector", k=2)
    assert "grant-nf-4471.md" not in {h.document.rsplit("/", 1)[-1] for h in vector.hits}
    graph = research_workspace.graph
    grant = next(cid for cid, key in graph.passages.title_of.items() if key == graph.resolve("Grant NF-4471"))
    trial = graph.resolve("BREATHE-2 trial")
    assert any(source == grant and graph.passages.title_of[target] == trial
               for source, target in graph.passages.title_links)


def test_an_alias_changes_the_seeds_and_the_walk_of_the_next_query(research_workspace, tmp_path):
    ws = reopened(research_workspace)
    try:
        before = retrieve(ws, QUESTION, mode="graphrag", k=5)
        chen_before = ws.graph.resolve("Chen")
        ws.corrections.add_alias("Chen", "Sarah Chen")
        after = retrieve(ws, QUESTION, mode="graphrag", k=5)
        chen_after = ws.graph.resolve("Chen")
    finally:
        ws.corrections.remove_alias("Chen")
        ws.close()

    def specificity(result):
        return next(s.specificity for s in result.graph_context.seeds if s.entity == "Sarah Chen")

    # "Chen" alone was its own entity; merged, Sarah Chen is named in one more passage, so
    # the seed weighs less and the walk's masses move.
    assert chen_before == "chen" and chen_after == "sarahchen"
    assert specificity(after) < specificity(before)
    assert [n.ppr for n in before.graph_context.nodes] != [n.ppr for n in after.graph_context.nodes]
    assert "chen" not in {n.key for n in after.graph_context.nodes}


def test_a_rejected_synonym_leaves_the_walk():
    mentions = [Mention("Wiley-Blackwell", "c1", "name"), Mention("Wiley Blackwel", "c2", "name")]
    chunks = [("c1", "Wiley-Blackwell printed it."), ("c2", "Wiley Blackwel printed it.")]
    kept = assemble_graph(mentions, [], {}, Canonicalizer(), chunk_texts=chunks)
    assert [(a, b) for a, b, _ in kept.passages.synonyms] == [("wileyblackwel", "wileyblackwell")]
    rejected = assemble_graph(mentions, [], {}, Canonicalizer(), chunk_texts=chunks,
                              rejected={("wileyblackwel", "wileyblackwell")})
    assert rejected.passages.synonyms == ()
    assert kept.pagerank_index().transition_t.nnz > rejected.pagerank_index().transition_t.nnz


def test_no_module_builds_a_second_graph_to_walk():
    """Only graph.py builds the walked index; the benchmark's synthetic graphs aside."""
    builders = []
    for path in sorted((ROOT / "workbench").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = ast.unparse(node.func)
                if name in ("PageRankIndex", "PageRankIndex.from_edges") or name.endswith("pagerank"):
                    builders.append((path.relative_to(ROOT).as_posix(), name))
    allowed = {"workbench/context_graph/graph.py", "workbench/bench/perf.py"}
    assert [b for b in builders if b[0] not in allowed] == []
    assert ("workbench/context_graph/graph.py", "PageRankIndex.from_edges") in builders
    assert not (ROOT / "workbench" / "passage_graph_index.py").exists()


def test_the_default_aliases_merge_the_usual_short_names():
    from workbench.settings import Settings

    c = Settings().canonicalization
    canon = Canonicalizer(aliases=c.aliases, articles=tuple(c.articles))
    assert canon.key("postgres") == canon.key("PostgreSQL")
    assert canon.key("user db") == canon.key("User Database")
    assert canon.key("k8s") == canon.key("Kubernetes")
