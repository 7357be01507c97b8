"""Answer material: the cited subgraph and chunks, and the LLM step that is off by default."""

from __future__ import annotations

import re

from workbench.answer.material import (ANSWER_INSTRUCTION, Answer, answer, answer_paths, build_context, prompt_labels,
                               render_prompt)
from workbench.retrieve import retrieve

from tests.conftest import REDIS_QUESTION


class RecordingClient:
    model = "test-model"

    def __init__(self):
        self.sent = []

    def chat(self, messages):
        self.sent.append(messages)
        return "The login flow breaks [b2c]."


def test_paths_context_holds_the_chain_edges_with_their_chunks(sample_workspace):
    result = retrieve(sample_workspace, REDIS_QUESTION, mode="paths", k=10)
    context = build_context(sample_workspace, result, max_chunks=4)
    edges = {(e["source"], e["relation"], e["target"]): e["chunks"] for e in context.data["subgraph"]["edges"]}
    assert ("login flow", "depends_on", "Auth Service") in edges
    assert {"login flow", "Auth Service", "token cache", "Redis"} <= set(context.data["subgraph"]["nodes"])
    assert len(context.data["chunks"]) == 4
    assert set(context.data["chunks"][0]) == {"id", "document", "text"}
    assert context.data["question"] == REDIS_QUESTION
    for chunk in context.data["chunks"]:
        assert f"[{chunk['id']}]" in context.markdown
    assert "login flow -depends_on-> Auth Service" in context.markdown


def test_keyword_context_keeps_only_edges_stated_by_the_hits(sample_workspace):
    result = retrieve(sample_workspace, "token cache backed by Redis", mode="keyword", k=3)
    context = build_context(sample_workspace, result)
    hit_ids = {h.chunk_id for h in result.hits}
    assert context.data["subgraph"]["edges"]
    for edge in context.data["subgraph"]["edges"]:
        assert edge["chunks"] and set(edge["chunks"]) <= hit_ids


def test_answer_without_a_configured_model_sends_nothing(sample_workspace, monkeypatch):
    llm = sample_workspace.settings.llm
    for name in (llm.base_url_env, llm.model_env, llm.api_key_env):
        monkeypatch.delenv(name, raising=False)
    context = build_context(sample_workspace, retrieve(sample_workspace, REDIS_QUESTION, mode="paths"))
    reply = answer(sample_workspace, context)
    assert isinstance(reply, Answer) and reply.configured is False
    assert reply.text.startswith("No language model is configured: set WORKBENCH_LLM_BASE_URL and WORKBENCH_LLM_MODEL")


def test_answer_sends_the_context_to_the_given_client(sample_workspace):
    context = build_context(sample_workspace, retrieve(sample_workspace, REDIS_QUESTION, mode="paths"))
    client = RecordingClient()
    reply = answer(sample_workspace, context, client=client)
    assert reply.configured and reply.model == "test-model" and reply.text.startswith("The login flow breaks")
    prompt = client.sent[0][-1]["content"]
    assert prompt.endswith(ANSWER_INSTRUCTION) and "directly" in ANSWER_INSTRUCTION
    assert f"Question: {REDIS_QUESTION}" in prompt
    # Sources are cited by per-answer labels, fenced by markers holding the answer's nonce.
    nonce = re.search(r"^<<<source c:([0-9a-f]+)-\d+", prompt, re.MULTILINE).group(1)
    labels = prompt_labels(context.data, nonce)
    for chunk_id in labels.values():
        assert chunk_id not in prompt
    assert prompt.count(f"<<<source c:{nonce}-") == len(context.data["chunks"])
    assert "login flow depends on auth service [c:" in prompt.lower()
    # The canned reply cites "b2c", no chunk of the context: the checks say so.
    assert reply.citations == [] and reply.checks is not None and not reply.checks.passed
    assert reply.checks.coverage == 0.0
    assert reply.to_json()["checks"]["passed"] is False


def _hop_chunks(paths) -> list[str]:
    return list(dict.fromkeys(next(iter(hop.chunks)) for path in paths for hop in path.hops))


def test_a_vector_answer_gets_the_cited_path_first(sample_workspace):
    """Seed 001 step 09: the model gets the nodes on the answer path, whatever the mode found."""
    result = retrieve(sample_workspace, REDIS_QUESTION, mode="vector", k=10)
    assert result.graph_context.paths == []  # the mode itself walks nothing
    reading, _, paths = answer_paths(sample_workspace, result)
    assert reading == "impact" and paths
    context = build_context(sample_workspace, result, max_chunks=6)
    first_path = context.data["answer_path"]["paths"][0]
    assert context.data["answer_path"]["reading"] == "impact" and first_path["nodes"][0] == "Redis"
    on_path = _hop_chunks(paths)[:6]
    assert [c["id"] for c in context.data["chunks"][:len(on_path)]] == on_path
    first_hop = first_path["hops"][0]
    assert [context.data["subgraph"]["edges"][0][k] for k in ("source", "relation", "target")] == \
        [first_hop[k] for k in ("source", "relation", "target")]
    assert context.data["subgraph"]["nodes"][:len(first_path["nodes"])] == first_path["nodes"]
    section = context.markdown.split("## Hops that answer the question")[1].split("##")[0]
    assert "Path 1 (Redis -> " in section and f"[{first_hop['chunks'][0]}" in section
    prompt = render_prompt(context.data, "0a1b2c3d")
    label = {chunk_id: label for label, chunk_id in prompt_labels(context.data, "0a1b2c3d").items()}
    assert prompt.startswith("Hops that answer the question:\nPath 1 (Redis -> ")
    assert f"[c:{label[first_hop['chunks'][0]]}" in prompt.split("Facts:")[0]


def test_graphrag_context_leads_with_its_paths_not_the_pagerank_triples(sample_workspace):
    result = retrieve(sample_workspace, REDIS_QUESTION, mode="graphrag", k=10)
    assert result.graph_context.reading == "impact" and result.graph_context.triples
    context = build_context(sample_workspace, result)
    path_hops = [(h.source, h.relation, h.target) for p in result.graph_context.paths[:3] for h in p.hops]
    edges = [(e["source"], e["relation"], e["target"]) for e in context.data["subgraph"]["edges"]]
    assert edges[:len(set(path_hops))] == list(dict.fromkeys(path_hops))
    assert len(edges) > len(set(path_hops))  # the rest of the graph context follows
    assert [c["id"] for c in context.data["chunks"][:2]] == _hop_chunks(result.graph_context.paths[:3])[:2]


def test_a_question_with_no_structural_reading_says_so(sample_workspace):
    result = retrieve(sample_workspace, "token cache backed by Redis", mode="keyword", k=3)
    context = build_context(sample_workspace, result)
    assert context.data["answer_path"]["reading"] is None and context.data["answer_path"]["paths"] == []
    assert [c["id"] for c in context.data["chunks"]] == [h.chunk_id for h in result.hits]
    assert "## Hops that answer the question\n\nNone known: no structural reading" in context.markdown


def test_the_context_marks_an_outdated_note_reading_the_documents_once_per_version(sample_private, monkeypatch):
    ws = sample_private
    old, new = "sample_corpus/decisions/2023-11-session-store.md", "sample_corpus/decisions/2024-06-session-store-redis.md"
    result = retrieve(ws, "What did we decide about the session store?", mode="hybrid", k=10)
    assert old in {h.document for h in result.hits}
    read = []
    documents = ws.store.documents
    monkeypatch.setattr(ws.store, "documents", lambda: read.append(1) or documents())
    first, again = build_context(ws, result), build_context(ws, result)
    assert first.outdated == again.outdated == {old: [new]}
    # 61k documents took about a second a read, twice an answer: now once per workspace version
    assert len(read) == 1
