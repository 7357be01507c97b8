"""Typed relation discovery: each new note's candidate notes asked of a chat model in the eight
declared relation types; answers checked (type, target id, confidence) and stored as candidates,
never facts, listed and accepted as the other candidates. A canned OpenAI-compatible server here;
the real local model in tests/test_local_model.py."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from workbench.extract.llm import LLMError
from workbench.extract.typed_relations import NoteCandidate, parse_typed_relations, typed_relation_messages
from workbench.model import DECLARED_RELATION_TYPES

NOTES = {
    "outage.md": ("Billing outage", "2024-05-02", "Invoices stopped for an hour: the invoicing worker's connection "
                  "pool was exhausted by retries. The worker restart procedure brought it back."),
    "restart-guide.md": ("Worker restart guide", "2024-01-10", "How to restart the invoicing worker safely, one "
                         "node at a time, draining its connection pool first."),
    "pool-sizing.md": ("Connection pool sizing", "2023-11-20", "Why the invoicing worker's connection pool holds "
                       "twenty connections, and what exhausts it."),
    "lunch.md": ("Lunch menu", "2024-06-01", "Soup and bread on Fridays, pasta on Mondays."),
}


def write_notes(folder, names=NOTES):
    folder.mkdir(exist_ok=True)
    for name, (title, date, text) in names.items():
        (folder / name).write_text(f"---\ntitle: {title}\ndate: \"{date}\"\n---\n# {title}\n\n{text}\n", encoding="utf-8")
    return folder


class CannedModel:
    """An OpenAI-compatible /chat/completions server that answers from the prompt it gets: for the
    Billing outage it names the restart guide by the id offered (RESOLVED_BY 0.9), an id never
    offered, a type outside the eight and a low-confidence link; for any other note, []."""

    def __init__(self):
        self.prompts: list[list[dict]] = []
        canned = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - the http.server name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                canned.prompts.append(body["messages"])
                payload = json.dumps({"choices": [{"message": {"content": canned.reply(body["messages"])}}]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(payload.encode())

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @staticmethod
    def offered(messages) -> dict[str, str]:
        """Title -> id of the candidates listed in the prompt."""
        return {title: cid for cid, title in re.findall(r"^\[(n\d+)\] ([^:]+):", messages[1]["content"], re.M)}

    def reply(self, messages) -> str:
        if not messages[1]["content"].startswith("NEW note: Billing outage"):
            return "[]"
        ids = self.offered(messages)
        answer = [{"target": "n99", "relation": "RESOLVED_BY", "confidence": 0.95},
                  {"target": ids.get("Connection pool sizing", "n1"), "relation": "FIXES", "confidence": 0.9},
                  {"target": ids.get("Connection pool sizing", "n1"), "relation": "REFERENCES", "confidence": 0.3}]
        if "Worker restart guide" in ids:
            answer.insert(0, {"target": ids["Worker restart guide"], "relation": "RESOLVED_BY", "confidence": 0.9})
        return "Here you go:\n```json\n" + json.dumps(answer) + "\n```"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def canned(monkeypatch):
    model = CannedModel()
    monkeypatch.setenv("WORKBENCH_LLM_BASE_URL", model.base_url)
    monkeypatch.setenv("WORKBENCH_LLM_MODEL", "canned")
    yield model
    model.close()


def typed_settings(settings, **retrieval):
    changed = settings.model_copy(deep=True)
    changed.extraction.typed_relations = True
    for name, value in retrieval.items():
        setattr(changed.retrieval, name, value)
    return changed


def test_answers_outside_the_types_the_ids_or_the_confidence_are_dropped():
    offered = [NoteCandidate("n1", "Restart guide", "How to restart."), NoteCandidate("n2", "Pool", "Sizing.")]
    reply = json.dumps([{"target": "n1", "relation": "resolved by", "confidence": 0.8},
                        {"target": "[n2]", "relation": "EXTENDS"},  # no confidence: 0.5, under 0.6
                        {"target": "n2", "relation": "EXTENDS", "confidence": 0.7},
                        {"target": "n3", "relation": "EXTENDS", "confidence": 0.9},
                        {"target": "n1", "relation": "FIXES", "confidence": 0.9}, "n1"])
    triples, problems = parse_typed_relations(reply, "Outage", offered, "c1", min_confidence=0.6)
    assert [(t.subject, t.relation, t.object, t.confidence, t.chunk_id, t.origin) for t in triples] == [
        ("Outage", "RESOLVED_BY", "Restart guide", 0.8, "c1", "candidate"),
        ("Outage", "EXTENDS", "Pool", 0.7, "c1", "candidate")]
    assert len(problems) == 3
    assert "'n3', which was not offered (n1, n2)" in problems[0] and "'FIXES', not one of" in problems[1]
    assert parse_typed_relations("I cannot tell.", "Outage", offered, "c1", 0.6) == (
        [], ["chunk c1: the model's relations are not a JSON list; skipped"])


def test_the_prompt_names_the_eight_types_and_each_candidate_by_id():
    messages = typed_relation_messages("Outage", "Invoices stopped.", [NoteCandidate("n1", "Restart guide", "x")])
    assert all(kind in messages[0]["content"] for kind in DECLARED_RELATION_TYPES) and len(DECLARED_RELATION_TYPES) == 8
    assert messages[1]["content"].startswith("NEW note: Outage\nInvoices stopped.")
    assert "[n1] Restart guide: x" in messages[1]["content"]


def test_ingest_stores_the_checked_relations_as_candidates_never_facts(tmp_path, make_workspace, settings, canned,
                                                                      capsys):
    ws = make_workspace(settings=typed_settings(settings))
    report = ws.ingest([write_notes(tmp_path / "notes")])
    assert len(canned.prompts) == len(NOTES)  # one request per new note
    billing = next(m for m in canned.prompts if m[1]["content"].startswith("NEW note: Billing outage"))
    offered = CannedModel.offered(billing)
    # The similar notes only: the lunch menu is under retrieval.min_vector_score.
    assert set(offered) == {"Worker restart guide", "Connection pool sizing"}
    found = [t for t in ws.candidates() if t.relation in DECLARED_RELATION_TYPES and t.relation != "SIMILAR_TO"]
    assert [(t.subject, t.relation, t.object, t.confidence, t.origin) for t in found] == [
        ("Billing outage", "RESOLVED_BY", "Worker restart guide", 0.9, "candidate")]
    first_chunk = min((c for c in ws.chunks() if c.document_id.endswith("outage.md")), key=lambda c: c.ordinal)
    assert found[0].chunk_id == first_chunk.id
    problems = [p for p in report.extraction_problems if "outage.md" in p]
    assert any("'n99', which was not offered" in p for p in problems)
    assert any("'FIXES', not one of" in p for p in problems)
    assert len(problems) == 2  # the REFERENCES link under the minimum confidence is filtered, not a problem
    assert not [e for e in ws.graph.edges() if e.relation == "RESOLVED_BY"]  # a candidate is no fact
    # Listed and accepted as every candidate: `candidates`, `candidates --accept`.
    from workbench.cli import main

    assert main(["--workspace", str(ws.path), "candidates", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {"subject": "Billing outage", "relation": "RESOLVED_BY", "object": "Worker restart guide",
            "confidence": 0.9, "chunk": first_chunk.id} in listed
    assert main(["--workspace", str(ws.path), "candidates", "--accept", "Billing outage", "RESOLVED_BY",
                 "Worker restart guide"]) == 0
    assert "now a graph fact" in capsys.readouterr().out
    [edge] = [e for e in ws.graph.edges() if e.relation == "RESOLVED_BY"]
    assert (ws.graph.name(edge.source), ws.graph.name(edge.target), edge.origin) == (
        "Billing outage", "Worker restart guide", "accepted")


def test_with_no_similar_note_the_most_recent_notes_are_offered(tmp_path, make_workspace, settings, canned):
    ws = make_workspace(settings=typed_settings(settings, min_vector_score=1.0))
    ws.settings.extraction.typed_relation_candidates = 2
    ws.ingest([write_notes(tmp_path / "notes")])
    billing = next(m for m in canned.prompts if m[1]["content"].startswith("NEW note: Billing outage"))
    # The two most recent other notes by date: the lunch menu (June) and the restart guide (January).
    assert list(CannedModel.offered(billing)) == ["Lunch menu", "Worker restart guide"]


def test_typed_relations_without_a_model_stop_before_writing(tmp_path, make_workspace, settings, monkeypatch):
    monkeypatch.delenv("WORKBENCH_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("WORKBENCH_LLM_MODEL", raising=False)
    ws = make_workspace(settings=typed_settings(settings))
    with pytest.raises(LLMError, match="extraction.typed_relations is on but no language model is configured"):
        ws.ingest([write_notes(tmp_path / "notes")])
    assert ws.store.count("documents") == 0
