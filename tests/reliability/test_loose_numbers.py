"""Issue 57, items 2, 8, 11 and 12: numbers outside any sense. A chat message timed ``"inf"``
hung the ingest at 100% CPU with the workspace lock held; epochs of 1e20 and -1e15 became the
years 5138 and 1938; ``retrieval.k: true`` and ``graphrag.graph_weight: .inf`` were accepted,
``graph.max_path_hops: 1000000000`` too (``path`` then ran for minutes); ``neighbors --hops -1``
printed a traceback."""

from __future__ import annotations

import json
import threading

import pytest

from workbench.ingest.loaders import load_file
from workbench.settings import SettingsError, load_settings

GOOD = 1_700_000_000  # 2023-11-14T22:13:20Z


@pytest.fixture
def small_path(tmp_path, make_workspace, write_corpus):
    ws = make_workspace()
    ws.ingest([write_corpus(tmp_path / "corpus", 6)])
    ws.close()
    return ws.path


def _message(i: int, timestamp) -> str:
    return json.dumps({"speaker": "ann", "text": f"Message {i} about Redis.", "timestamp": timestamp})


def test_timestamps_that_name_no_time_are_undated_with_a_warning(tmp_path):
    chat = tmp_path / "chat.jsonl"
    stamps = ["inf", float("nan"), 1e20, -1e15, "-Infinity", 10 ** 400, GOOD, GOOD * 1000]
    chat.write_text("\n".join(_message(i, t) for i, t in enumerate(stamps)) + "\n", encoding="utf-8")
    loaded: list = []
    worker = threading.Thread(target=lambda: loaded.append(load_file(chat, chat)), daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive(), "loading the chat log hangs"
    [(documents, problems)] = loaded
    [conversation] = documents
    times = [segment.timestamp for segment in conversation.segments]
    assert times == [None] * 6 + ["2023-11-14T22:13:20+00:00"] * 2
    warnings = [(p.path, p.line, p.skipped) for p in problems]
    assert warnings == [("chat.jsonl", line, False) for line in range(1, 7)]
    assert all("undated" in p.message for p in problems)
    assert "'inf' is not a finite number" in problems[0].message
    assert "1e+20 is past every epoch unit" in problems[2].message
    assert "outside the years 1 to 9999" in problems[3].message


def test_an_ingest_of_an_infinite_timestamp_finishes(tmp_path, run_cli):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "chat.jsonl").write_text(_message(0, "inf") + "\n" + _message(1, GOOD) + "\n", encoding="utf-8")
    done = run_cli("--workspace", tmp_path / "ws", "ingest", corpus, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "chat.jsonl: line 1: timestamp 'inf' is not a finite number; the message is undated" in done.stdout + done.stderr


@pytest.mark.parametrize("section, text, named", [
    ("retrieval", "k: true", "retrieval.k: true is not a number"),
    ("graph", "max_path_hops: false", "graph.max_path_hops: false is not a number"),
    ("graphrag", "graph_weight: .inf", "graphrag.graph_weight: Input should be a finite number"),
    ("graphrag", "ppr_damping: .nan", "graphrag.ppr_damping: Input should be a finite number"),
    ("llm", "timeout_seconds: -.inf", "llm.timeout_seconds: Input should be a finite number"),
    ("graph", "max_path_hops: 1000000000", "graph.max_path_hops: Input should be less than or equal to 10"),
    ("retrieval", "k: 1000000000000000000000000000000", "retrieval.k: Input should be less than or equal to 1000"),
])
def test_loose_setting_values_are_refused_naming_the_key(tmp_path, section, text, named):
    path = tmp_path / "settings.yaml"
    path.write_text(f"{section}:\n  {text}\n", encoding="utf-8")
    with pytest.raises(SettingsError) as refused:
        load_settings(path)
    assert str(refused.value) == f"{path}: {named}"


def test_true_false_settings_still_take_true_and_false(tmp_path):
    path = tmp_path / "settings.yaml"
    path.write_text("chunking:\n  pack_paragraphs: true\nretrieval:\n  k: 12\ngraphrag:\n  graph_weight: 2\n",
                    encoding="utf-8")
    loaded = load_settings(path)
    assert loaded.chunking.pack_paragraphs is True and loaded.retrieval.k == 12 and loaded.graphrag.graph_weight == 2.0


def test_every_setting_that_bounds_work_states_an_upper_bound():
    from workbench.settings import Settings

    unbounded = []
    for section, field in Settings.model_fields.items():
        for name, info in field.annotation.model_fields.items():
            kinds = {info.annotation, *getattr(info.annotation, "__args__", ())}
            if kinds & {int, float} and not any(hasattr(rule, "le") or hasattr(rule, "lt") for rule in info.metadata):
                unbounded.append(f"{section}.{name}")
    # What is left bounds no work: a threshold past which less is done, a seed, a time gap.
    assert sorted(unbounded) == sorted(UNBOUNDED_BY_DESIGN)


UNBOUNDED_BY_DESIGN = [
    "chunking.pack_from_chars", "graph.title_link_weight", "graph.relation_weight", "graph.synonym_threshold", "graphrag.similar_seed_weight",
    "graphrag.graph_weight",
    "communities.resolution", "communities.seed", "communities.min_size", "communities.relation_weight",
    "episodes.session_gap_minutes",
]


@pytest.mark.parametrize("args, named", [
    (["neighbors", "queue number 3", "--hops", "-1"], "argument --hops: -1 is not a whole number from 0 to 10"),
    (["path", "service number 3", "queue number 3", "--max-hops", "1000000000"],
     "argument --max-hops: 1000000000 is not a whole number from 1 to 10"),
    (["query", "queue", "--k", str(10 ** 30)], f"argument --k/-k: {10 ** 30} is not a whole number from 1 to 1000"),
])
def test_flags_outside_their_range_are_one_line_naming_the_flag(small_path, run_cli, args, named):
    done = run_cli("--workspace", small_path, *args)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].endswith(f"error: {named}")


@pytest.mark.parametrize("args, named", [
    (["bench", "scale", "--chat-mb", "inf"], "argument --chat-mb: inf is not a number from 0 to 10000"),
    (["bench", "perf", "--queries", "0"], "argument --queries: 0 is not a whole number from 1 to 100000"),
    (["llm-serve", "--threads", "-2"], "argument --threads: -2 is not a whole number from 1 to 1024"),
    (["llm-serve", "--timeout", "nan"], "argument --timeout: nan is not a number from 0.1 to 3600"),
])
def test_flags_of_benchmarks_and_servers_state_their_range(capsys, args, named):
    from workbench.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(args)
    assert stopped.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(f"error: {named}")
