"""LLM extraction: lenient parsing, the OpenAI-compatible client against a local canned server."""

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from tests.conftest import make_corpus
from workbench.extract.llm import LLMError, LLMExtractor, OpenAICompatibleClient, client_from_settings, parse_triples
from workbench.model import Chunk, Document, Triple
from workbench.settings import LLMSettings


def _doc_chunk(text="Cart uses Redis."):
    return Document("d", "/d", "d", "text", text, "h"), [Chunk("c1", "d", 0, text, 0, len(text))]


class _Canned:
    def __init__(self, reply):
        self.reply = reply
        self.sent = []

    def chat(self, messages):
        self.sent.append(messages)
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


def test_fenced_json_list_becomes_candidate_triples():
    reply = '```json\n[{"subject": "Cart", "relation": "Depends On", "object": "Redis", "object_type": "Technology"}]\n```'
    [triple] = LLMExtractor(_Canned(reply)).extract(*_doc_chunk()).triples
    assert (triple.subject, triple.relation, triple.object) == ("Cart", "depends_on", "Redis")
    assert (triple.origin, triple.confidence, triple.chunk_id) == ("candidate", 0.5, "c1")
    assert (triple.subject_type, triple.object_type) == ("concept", "technology")


def test_the_models_own_confidence_is_kept_when_it_is_between_0_and_1():
    triples, _ = parse_triples('[{"subject": "A", "relation": "uses", "object": "B", "confidence": 0.3},'
                               ' {"subject": "A", "relation": "uses", "object": "C", "confidence": 7}]', "c1")
    assert [t.confidence for t in triples] == [0.3, 0.5]


def test_object_with_triples_key_is_accepted():
    triples, problems = parse_triples('{"triples": [{"subject": "A", "relation": "uses", "object": "B"}]}', "c1")
    assert [(t.subject, t.object) for t in triples] == [("A", "B")] and problems == []


def test_invalid_json_is_a_problem_not_an_exception():
    found = LLMExtractor(_Canned("I think Cart uses Redis [maybe")).extract(*_doc_chunk())
    assert found.triples == [] and found.problems == ["chunk c1: LLM answer is not JSON; skipped"]


def test_incomplete_items_are_skipped_and_reported():
    reply = '[{"subject": "A", "relation": "uses", "object": "B"}, {"subject": "A", "object": ""}, "junk"]'
    triples, problems = parse_triples(reply, "c1")
    assert len(triples) == 1 and len(problems) == 2


def test_failed_request_is_a_problem():
    found = LLMExtractor(_Canned(LLMError("down"))).extract(*_doc_chunk())
    assert found.triples == [] and "LLM request failed: down" in found.problems[0]


def test_prompt_carries_the_chunk_text():
    client = _Canned("[]")
    LLMExtractor(client).extract(*_doc_chunk("Ledger writes to Kafka."))
    assert client.sent[0][-1] == {"role": "user", "content": "Ledger writes to Kafka."}


def test_client_from_settings_reads_the_named_variables():
    settings = LLMSettings(base_url_env="MY_URL", model_env="MY_MODEL", api_key_env="MY_KEY", timeout_seconds=5)
    assert client_from_settings(settings, {"MY_URL": "http://x/v1"}) is None
    client = client_from_settings(settings, {"MY_URL": "http://x/v1/", "MY_MODEL": "tiny", "MY_KEY": "k"})
    assert (client.url, client.model, client.api_key, client.timeout) == ("http://x/v1/chat/completions", "tiny", "k", 5)


@pytest.fixture
def canned_server():
    received = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            received.append((self.path, self.headers.get("Authorization"), body))
            if body["model"] == "broken":
                self.send_response(500)
                self.end_headers()
                return
            content = json.dumps([{"subject": "Cart", "relation": "uses", "object": "Redis"}])
            payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", received
    server.shutdown()
    server.server_close()


def test_openai_compatible_client_posts_chat_completions(canned_server):
    base_url, received = canned_server
    client = OpenAICompatibleClient(base_url, "tiny", api_key="secret", timeout=5)
    found = LLMExtractor(client).extract(*_doc_chunk())
    assert [(t.subject, t.relation, t.object) for t in found.triples] == [("Cart", "uses", "Redis")]
    path, auth, body = received[0]
    assert (path, auth, body["model"]) == ("/v1/chat/completions", "Bearer secret", "tiny")


def test_http_error_becomes_llm_error(canned_server):
    base_url, _ = canned_server
    with pytest.raises(LLMError, match="HTTP 500"):
        OpenAICompatibleClient(base_url, "broken", timeout=5).chat([{"role": "user", "content": "x"}])


# -- extraction.llm: the setting that turns the LLM extractor on --------------------------------

def test_extraction_llm_is_off_by_default_and_asks_no_model():
    from workbench.extract import extractors_from_settings
    from workbench.settings import ExtractionSettings

    assert ExtractionSettings().llm is False
    names = [e.name for e in extractors_from_settings(ExtractionSettings(), llm_client=_Canned("[]"))]
    assert "llm" not in names


def test_extraction_llm_on_adds_the_llm_extractor_with_the_client():
    from workbench.extract import extractors_from_settings
    from workbench.settings import ExtractionSettings

    client = _Canned('[{"subject": "Cart", "relation": "uses", "object": "Redis"}]')
    extractors = extractors_from_settings(ExtractionSettings(llm=True), llm_client=client)
    [llm] = [e for e in extractors if e.name == "llm"]
    assert isinstance(llm, LLMExtractor) and llm.client is client


def test_extraction_llm_on_without_a_model_names_the_variables_to_set():
    from workbench.extract import extractors_from_settings
    from workbench.settings import ExtractionSettings

    with pytest.raises(LLMError, match="extraction.llm is on.*WORKBENCH_LLM_BASE_URL and WORKBENCH_LLM_MODEL"):
        extractors_from_settings(ExtractionSettings(llm=True))


def test_ingest_with_extraction_llm_stores_candidates_kept_out_of_the_graph_until_accepted(canned_server, make_workspace, settings, tmp_path,
                                                                monkeypatch):
    base_url, received = canned_server
    monkeypatch.setenv("WORKBENCH_LLM_BASE_URL", base_url)
    monkeypatch.setenv("WORKBENCH_LLM_MODEL", "tiny")
    on = settings.model_copy(deep=True)
    on.extraction.llm = True
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "cart.md").write_text("# Cart\n\nThe cart keeps sessions.\n", encoding="utf-8")
    ws = make_workspace(settings=on)
    ws.ingest([corpus])
    llm_triples = [t for t in ws.store.triples() if t.relation == "uses"]
    assert [(t.subject, t.relation, t.object, t.origin) for t in llm_triples] == [("Cart", "uses", "Redis", "candidate")]
    assert len(received) == len(ws.chunks()) >= 1  # one request per chunk
    assert [(t.subject, t.object) for t in ws.candidates()] == [("Cart", "Redis")]
    assert not ws.graph.edges(relation="uses")
    ws.store.replace_candidates([])  # recomputing the SIMILAR_TO candidates keeps the model's
    assert len(ws.candidates()) == 1
    with pytest.raises(ValueError, match="no candidate Cart -uses-> Kafka; candidates: Cart -uses-> Redis"):
        ws.corrections.accept_candidate("Cart", "uses", "Kafka")
    assert ws.corrections.accept_candidate("Cart", "uses", "Redis") == 1
    [edge] = ws.graph.edges(relation="uses")
    assert (ws.graph.name(edge.source), ws.graph.name(edge.target), edge.origin) == ("Cart", "Redis", "accepted")
    assert ws.candidates() == []


def test_ingest_with_extraction_llm_and_no_model_stops_before_writing(make_workspace, settings, tmp_path,
                                                                       monkeypatch):
    for name in ("WORKBENCH_LLM_BASE_URL", "WORKBENCH_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    on = settings.model_copy(deep=True)
    on.extraction.llm = True
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "cart.md").write_text("# Cart\n\nThe cart keeps sessions.\n", encoding="utf-8")
    ws = make_workspace(settings=on)
    with pytest.raises(LLMError, match="no language model is configured"):
        ws.ingest([corpus])
    assert ws.store.documents() == []


def test_candidates_are_read_most_confident_first_through_their_own_index_not_a_scan_of_every_triple(
        make_workspace, tmp_path):
    ws = make_workspace()
    ws.ingest([make_corpus(tmp_path / "corpus", 3)])
    chunk = ws.chunks()[0].id
    ws.store.add_triples([Triple(subject, "uses", "Redis", chunk, confidence, "candidate", "name", "name")
                          for subject, confidence in (("Cart", 0.6), ("Auth", 0.6), ("Search", 0.9))])
    scanned = sorted((t for t in ws.store.triples() if t.origin == "candidate"),  # the reading it replaces
                     key=lambda t: (-t.confidence, t.subject, t.object))
    assert {"Search", "Auth", "Cart"} < {t.subject for t in scanned} and len(scanned) > 3  # the notes' SIMILAR_TO too
    statements: list[str] = []
    ws.store.db.set_trace_callback(statements.append)
    try:
        assert ws.candidates() == scanned
    finally:
        ws.store.db.set_trace_callback(None)
    reads = [s for s in statements if s.lstrip().upper().startswith("SELECT") and "triples" in s]
    plans = [" ".join(str(row[-1]) for row in ws.store.db.execute("EXPLAIN QUERY PLAN " + s)) for s in reads]
    assert plans and all("triples_candidates" in plan for plan in plans), plans  # 5.7 s at 1.18 M triples as a scan
