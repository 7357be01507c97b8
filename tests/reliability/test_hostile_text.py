"""Hostile text is data: markup in names, text and file names is stored verbatim and printed as
plain text; a catastrophic user pattern is stopped and reported. (The app and graph views
escape it: tests/test_visual.py.)"""

from __future__ import annotations

import json
import time

from workbench.settings import load_settings

SCRIPT = "<script>alert('x')</script>"
IMG = '<img src=x onerror="alert(1)">'
# A closing bracket that closes one opened in the name is kept: the name is the markup, whole.
SCRIPT_NAME = SCRIPT
FILE_NAME = "<img src=x onerror=alert(1)>.md"  # no slash: it has to be a real file name


def _hostile_corpus(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / FILE_NAME).write_text(
        "---\n"
        f"title: '{IMG}'\n"
        f"relations:\n  DEPENDS_ON: [\"{SCRIPT}\"]\n"
        "---\n"
        f"The <b>Auth</b> service depends on Redis. {SCRIPT} & {IMG}\n",
        encoding="utf-8",
    )
    (corpus / "plain.txt").write_text("The billing service depends on Redis.\n", encoding="utf-8")
    return corpus


def test_markup_in_names_text_and_file_names_is_stored_verbatim(tmp_path, make_workspace):
    ws = make_workspace()
    report = ws.ingest([_hostile_corpus(tmp_path)])
    assert report.documents_added == 2
    hostile = next(d for d in ws.documents() if d.id.endswith(".md"))
    assert hostile.id == f"corpus/{FILE_NAME}"
    assert hostile.title == IMG
    (chunk,) = [c for c in ws.chunks() if c.document_id == hostile.id]
    assert SCRIPT in chunk.text and IMG in chunk.text and "<b>Auth</b>" in chunk.text
    assert SCRIPT in {m.surface for m in ws.store.mentions()}  # the declared target, as written
    assert SCRIPT_NAME in {e.name for e in ws.entities()}
    key = ws.graph.resolve(SCRIPT)
    assert key in {e.target for e in ws.graph.edges() if e.relation == "DEPENDS_ON"}


def test_cli_prints_hostile_text_as_plain_text(tmp_path, run_cli, make_workspace):
    workspace = tmp_path / "ws"
    make_workspace("ws").ingest([_hostile_corpus(tmp_path)])
    entities = run_cli("--workspace", workspace, "entities")
    assert SCRIPT_NAME in entities.stdout and "&lt;" not in entities.stdout
    as_json = json.loads(run_cli("--workspace", workspace, "entities", "--json").stdout)
    assert SCRIPT_NAME in {e["name"] for e in as_json}


def test_catastrophic_user_pattern_in_settings_is_stopped_and_reported_during_ingest(tmp_path, make_workspace):
    settings_file = tmp_path / "settings.yaml"
    # (a+)+$ is the textbook catastrophic pattern; the regex engine happens to handle it, so
    # (a|aa)+$, which it does not, shows the timeout.
    settings_file.write_text(
        "extraction:\n"
        "  pattern_timeout_seconds: 0.2\n"
        "  entity_patterns:\n"
        "    - {type: concept, regex: '(a+)+$'}\n"
        "    - {type: concept, regex: '(a|aa)+$'}\n"
        "    - {type: technology, terms: [Redis]}\n",
        encoding="utf-8",
    )
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(6):
        (corpus / f"evil{i}.txt").write_text("a" * 45 + "!\n", encoding="utf-8")
    (corpus / "good.txt").write_text("The cart service depends on Redis.\n", encoding="utf-8")

    ws = make_workspace(settings=load_settings(settings_file))
    started = time.monotonic()
    report = ws.ingest([corpus])
    elapsed = time.monotonic() - started

    timed_out = [p for p in report.extraction_problems if "(a|aa)+$" in p and "timed out on chunk" in p]
    assert timed_out and all(p.startswith("corpus/evil") for p in timed_out)
    # After three timeouts the pattern is switched off, so the cost is bounded by about 3 budgets.
    assert any("switched off" in p for p in report.extraction_problems)
    assert len(timed_out) == 3
    assert elapsed < 60
    assert report.documents_added == 7
    assert "redis" in ws.graph
