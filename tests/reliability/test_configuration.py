"""Bad settings stop with a message naming the key; a missing LLM endpoint is reported, not raised."""

from __future__ import annotations

import pytest

from workbench.extract.llm import client_from_settings
from workbench.settings import DEFAULT_SETTINGS_PATH, LLMSettings, SettingsError, load_settings

from tests.conftest import ROOT

BAD_SETTINGS = [
    ("chunking:\n  max_chars: 500\n  max_char: 3\n", "chunking.max_char", "unknown key"),
    ("retrievl:\n  k: 5\n", "retrievl", "unknown key"),
    ("time:\n  overfetch: 4\n", "time.overfetch", "renamed time.window_depth: write window_depth instead"),
    ("graphrag:\n  vector_overfetch_multiplier: 3\n", "graphrag.vector_overfetch_multiplier",
     "renamed graphrag.seed_candidates_per_seed"),
    ("retrieval:\n  k: many\n", "retrieval.k", "integer"),
    ("retrieval:\n  k: -3\n", "retrieval.k", "greater than 0"),
    ("graph:\n  max_path_hops: 0\n", "graph.max_path_hops", "greater than 0"),
    ("extraction:\n  pattern_timeout_seconds: -1\n", "extraction.pattern_timeout_seconds", "greater than 0"),
    ("extraction:\n  entity_patterns:\n    - {type: concept, regex: '(unclosed'}\n",
     "extraction.entity_patterns.0.regex", "(unclosed"),
    ("extraction:\n  relations:\n    - {relation: uses, regex: '(?P<subject>\\w+) uses (?P<object'}\n",
     "extraction.relations.0.regex", "(?P<object"),
    ("- just\n- a list\n", "settings must be a mapping", "list"),
    ("chunking: [unclosed\n", "cannot read settings", "settings.yaml"),
]


@pytest.mark.parametrize(("text", "names", "says"), BAD_SETTINGS)
def test_bad_settings_raise_settings_error_naming_the_key(tmp_path, text, names, says):
    path = tmp_path / "settings.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SettingsError) as caught:
        load_settings(path)
    assert names in str(caught.value) and says in str(caught.value)
    assert str(path) in str(caught.value)


def test_the_settings_read_by_default_are_the_projects_file():
    # Read when no --settings is given: a path one folder too deep read the defaults instead, silently.
    assert DEFAULT_SETTINGS_PATH == ROOT / "settings.yaml" and DEFAULT_SETTINGS_PATH.is_file()


def test_missing_settings_file_is_named(tmp_path):
    with pytest.raises(SettingsError, match="nowhere.yaml: settings file not found"):
        load_settings(tmp_path / "nowhere.yaml")


@pytest.mark.parametrize(("command", "text", "names"), [
    (["settings"], "retrieval:\n  k: -3\n", "retrieval.k"),
    (["ingest", "."], "extraction:\n  entity_patterns:\n    - {type: x, regex: '(a'}\n", "extraction.entity_patterns.0.regex"),
    (["stats"], "chunking:\n  max_char: 3\n", "chunking.max_char"),
])
def test_cli_with_bad_settings_prints_one_line_naming_the_key(tmp_path, run_cli, command, text, names):
    path = tmp_path / "settings.yaml"
    path.write_text(text, encoding="utf-8")
    result = run_cli("--workspace", tmp_path / "ws", "--settings", path, *command)
    assert result.returncode == 1
    assert names in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_no_llm_endpoint_configured_gives_no_client():
    assert client_from_settings(LLMSettings(), environ={}) is None
    assert client_from_settings(LLMSettings(), environ={"WORKBENCH_LLM_BASE_URL": "http://127.0.0.1:1/v1"}) is None


def _without_llm_env(monkeypatch):
    for name in ("WORKBENCH_LLM_BASE_URL", "WORKBENCH_LLM_MODEL", "WORKBENCH_LLM_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_answer_without_an_llm_endpoint_says_so_and_exits_cleanly(tmp_path, make_workspace, run_cli, monkeypatch):
    _without_llm_env(monkeypatch)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.md").write_text("The checkout service depends on Redis.\n", encoding="utf-8")
    make_workspace("ws").ingest([corpus])
    # Keyword retrieval needs no model in the child process, which keeps this test quick.
    question = ("answer", "what does checkout depend on?", "--mode", "keyword")
    result = run_cli("--workspace", tmp_path / "ws", *question)
    assert result.returncode == 0, result.stderr
    assert "No language model is configured" in result.stdout and "WORKBENCH_LLM_BASE_URL" in result.stdout
    assert "Traceback" not in result.stderr

    unreachable = run_cli("--workspace", tmp_path / "ws", *question,
                          env={"WORKBENCH_LLM_BASE_URL": "http://127.0.0.1:1/v1", "WORKBENCH_LLM_MODEL": "m"})
    assert unreachable.returncode == 1
    assert "127.0.0.1:1" in unreachable.stderr and "Traceback" not in unreachable.stderr
