"""The retrieval commands: query, compare, context and answer, through workbench.cli.main."""

from __future__ import annotations

import json

import pytest

from workbench.cli import main

QUESTION = "If Redis goes down, what breaks?"


def run(capsys, ws, *argv):
    code = main(["--workspace", str(ws.path), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_query_json_has_the_documented_shape(sample_workspace, capsys):
    code, out, _ = run(capsys, sample_workspace, "query", QUESTION, "--mode", "graphrag", "--k", "4", "--json")
    assert code == 0
    payload = json.loads(out)
    assert set(payload) == {"query", "mode_requested", "mode_used", "reason", "hits", "stats", "graph_context"}
    assert payload["query"] == QUESTION
    assert payload["mode_requested"] == "graphrag" and payload["mode_used"] == "full_graphrag"
    assert 0 < len(payload["hits"]) <= 4
    for rank, hit in enumerate(payload["hits"], 1):
        assert set(hit) == {"rank", "chunk_id", "document", "score", "time", "text", "why"}
        assert hit["rank"] == rank and {"walk_rank", "provenance_rank", "hybrid_rank"} <= set(hit["why"])
        assert "rrf" in hit["why"] or "cited_path" in hit["why"] or (
            hit["why"].get("via") == "bridge" and hit["why"]["parent"] in {h["chunk_id"] for h in payload["hits"][:rank - 1]})
    assert set(payload["graph_context"]) == {"seeds", "nodes", "triples", "passages", "reading", "entities", "paths",
                                             "impact", "communities", "themes", "themes_from"}
    triple = payload["graph_context"]["triples"][0]
    assert set(triple) == {"source", "relation", "target", "weight", "confidence", "origin", "first_seen",
                           "last_seen", "chunks", "documents"} and triple["chunks"]
    assert payload["stats"]["seconds"]["total"] > 0 and payload["stats"]["ppr_converged"] is True
    assert payload["graph_context"]["seeds"] == payload["stats"]["seeds"] != []


def test_query_json_is_the_results_one_serialization(sample_workspace, capsys):
    from workbench.retrieve import retrieve

    code, out, _ = run(capsys, sample_workspace, "query", QUESTION, "--mode", "paths", "--k", "4", "--json")
    expected = retrieve(sample_workspace, QUESTION, mode="paths", k=4).to_json()
    payload = json.loads(out)
    for stage in set(payload["stats"]["seconds"]):  # timings differ between two runs; nothing else does
        payload["stats"]["seconds"][stage] = expected["stats"]["seconds"][stage]
    assert code == 0 and payload == expected and payload["graph_context"]["reading"] == "impact"


def test_query_table_names_the_mode_used(sample_workspace, capsys):
    code, out, _ = run(capsys, sample_workspace, "query", QUESTION, "--mode", "keyword", "--k", "3")
    assert code == 0 and out.startswith("mode keyword (used: keyword)") and "redis" in out.lower()
    assert "Matched the words" in out and "matched_terms=" not in out  # the why as a sentence


def test_unknown_mode_is_an_error_naming_the_modes(sample_workspace, capsys):
    code, _, err = run(capsys, sample_workspace, "query", QUESTION, "--mode", "bm42")
    assert code == 2 and "keyword, vector, hybrid, expand, graphrag, paths" in err


def test_compare_marks_hits_shared_by_two_modes(sample_workspace, capsys):
    code, out, _ = run(capsys, sample_workspace, "compare", QUESTION, "--modes", "keyword,vector,paths", "--k", "5", "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["query"] == QUESTION and list(payload["results"]) == ["keyword", "vector", "paths"]
    ids = {mode: {h["chunk_id"] for h in r["hits"]} for mode, r in payload["results"].items()}
    expected = sorted(c for c in set().union(*ids.values()) if sum(c in s for s in ids.values()) >= 2)
    assert payload["shared"] == expected and expected
    code, out, _ = run(capsys, sample_workspace, "compare", QUESTION, "--modes", "keyword,vector", "--k", "5")
    assert "* " in out and "keyword" in out.splitlines()[2]


@pytest.mark.parametrize("fmt", ["markdown", "json"])
def test_context_prints_the_cited_material(sample_workspace, capsys, fmt):
    extra = ["--json"] if fmt == "json" else []
    code, out, _ = run(capsys, sample_workspace, "context", QUESTION, "--mode", "paths", *extra)
    assert code == 0
    if fmt == "json":
        data = json.loads(out)
        assert set(data) >= {"question", "subgraph", "chunks"} and data["subgraph"]["edges"]
    else:
        assert out.startswith("# Question") and "## Sources (paths)" in out


def test_answer_says_no_model_is_configured(sample_workspace, capsys, monkeypatch):
    for name in ("WORKBENCH_LLM_BASE_URL", "WORKBENCH_LLM_MODEL", "WORKBENCH_LLM_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    code, out, _ = run(capsys, sample_workspace, "answer", QUESTION, "--json")
    payload = json.loads(out)
    assert code == 0 and payload["configured"] is False and "No language model is configured" in payload["answer"]


def test_path_reads_its_defaults_from_the_settings_as_the_mcp_server_does(sample_workspace, tmp_path):
    import yaml

    from tests.conftest import ROOT, run_cli

    settings = yaml.safe_load((ROOT / "settings.yaml").read_text(encoding="utf-8"))
    settings.setdefault("graph", {})["max_path_hops"] = 1
    short = tmp_path / "short.yaml"
    short.write_text(yaml.safe_dump(settings), encoding="utf-8")
    ws = ["--workspace", sample_workspace.path]
    default = run_cli(*ws, "path", "login flow", "redis", "--json")
    assert default.returncode == 0, default.stderr
    assert [p["nodes"] for p in json.loads(default.stdout)["paths"]][0][-1].lower() == "redis"
    one_hop = run_cli(*ws, "--settings", short, "path", "login flow", "redis")
    assert one_hop.returncode == 0 and "within 1 hops" in one_hop.stdout
    flag = run_cli(*ws, "--settings", short, "path", "login flow", "redis", "--max-hops", "3", "--json")
    assert json.loads(flag.stdout)["paths"]
