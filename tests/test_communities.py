"""Communities, the global mode, time windows, episodes and timelines on the sample corpus."""

from __future__ import annotations

import json
import shutil
from datetime import date

import numpy as np
import pytest

from tests.conftest import SAMPLE
from workbench.retrieve import retrieve
from workbench.retrieve.timewindow import TimeWindowError, resolve_window
from workbench.corpus.summaries import SUMMARIES_VERSION, version_mark

THEMES = "What are the main themes across all documents?"
SESSION_QUESTION = "What did we decide about the session store last month?"


def test_sample_corpus_communities_are_stored_and_cover_the_themes(sample_workspace):
    ws = sample_workspace
    assert ws.store.meta(SUMMARIES_VERSION) == version_mark(ws, ws.store.version)
    summaries = ws.summaries()
    assert summaries.stored and len(summaries.reports) >= 4
    members = [set(r.members) for r in summaries.reports]
    assert any({"authservice", "tokencache"} <= m for m in members)  # identity / login chain
    assert any("kafka" in m and "reportingpipeline" in m for m in members)  # data / reporting
    assert any("searchservice" in m and "elasticsearch" in m for m in members)  # search
    assert all(r.title and r.points and r.first_seen for r in summaries.reports if r.size >= 5 and r.level == 0)
    assert summaries.report_vectors is not None and len(summaries.report_vectors) == len(summaries.reports)


def test_every_report_point_is_a_sentence_of_its_chunk(sample_workspace):
    points = [p for r in sample_workspace.communities() for p in r.points]
    assert len(points) >= 10
    chunks = {c.id: c for c in sample_workspace.chunks([p.chunk_id for p in points])}
    for point in points:
        assert point.text in chunks[point.chunk_id].text
        assert chunks[point.chunk_id].document_id == point.document


def test_global_mode_answers_the_themes_question_with_cited_points(sample_workspace):
    reports = {r.id: r for r in sample_workspace.communities()}
    themes = [r for r in reports.values() if r.level == 0]
    assert len(themes) >= 4
    result = retrieve(sample_workspace, THEMES, mode="global", k=len(themes))
    assert result.mode_used == "global" and len(result.hits) == len(themes)
    used = result.graph_context.communities
    # one point from each theme: k points from k distinct themes when there are k
    assert sorted(reports[c.id].parent or c.id for c in used) == sorted(t.id for t in themes)
    members = set().union(*(reports[c.id].members for c in used))
    assert {"authservice", "kafka", "searchservice"} <= members
    for hit in result.hits:
        assert hit.why.point in hit.text  # the point's chunk states what the point says
        assert hit.why.community_title and hit.why.point_kind in ("relation", "sentence")


def test_timeline_entries_are_in_time_order_and_cited(sample_workspace):
    from workbench.corpus.timeline import timeline

    found = timeline(sample_workspace, "token cache")
    name, entries = found.entity, found.entries
    assert name == "token cache" and len(entries) >= 5
    dated = [e.time for e in entries if e.time]
    assert dated == sorted(dated)
    assert {"mention", "relation", "decision"} <= {e.kind for e in entries}
    chunks = {c.id: c.text for c in sample_workspace.chunks([e.chunk_id for e in entries])}
    assert all(e.text in chunks[e.chunk_id] for e in entries if e.kind != "relation")


def test_last_month_in_july_2024_finds_the_june_decision_not_the_november_one(sample_workspace):
    for mode in ("hybrid", "vector", "graphrag"):
        result = retrieve(sample_workspace, SESSION_QUESTION, mode=mode, k=5, as_of="2024-07-15")
        assert result.hits, mode
        documents = {h.document for h in result.hits}
        assert "sample_corpus/decisions/2024-06-session-store-redis.md" in documents
        assert "sample_corpus/decisions/2023-11-session-store.md" not in documents
        assert all(h.time and "2024-06-01" <= h.time[:10] <= "2024-06-30" for h in result.hits)
        assert result.stats.time_window.window.since == "2024-06-01" and "last month" in result.reason
    unfiltered = retrieve(sample_workspace, "What did we decide about the session store?", mode="hybrid", k=10)
    assert "sample_corpus/decisions/2023-11-session-store.md" in {h.document for h in unfiltered.hits}
    assert all(h.time for h in unfiltered.hits if not h.document.endswith(".json") and "#" not in h.document)


def test_explicit_window_overfetches_until_k_hits_survive(sample_workspace):
    result = retrieve(sample_workspace, "Redis", mode="keyword", k=3, since="2024-05-01", until="2024-05-31")
    assert len(result.hits) == 3
    assert all("2024-05-01" <= h.time[:10] <= "2024-05-31" for h in result.hits)
    assert [h.rank for h in result.hits] == [1, 2, 3]


@pytest.mark.parametrize("phrase, as_of, since, until", [
    ("last month", date(2024, 1, 10), "2023-12-01", "2023-12-31"),
    ("this year", date(2024, 7, 1), "2024-01-01", "2024-07-01"),
    ("in February", date(2024, 7, 1), "2024-02-01", "2024-02-29"),
    ("in March 2023", date(2024, 7, 1), "2023-03-01", "2023-03-31"),
    ("in 2023", date(2024, 7, 1), "2023-01-01", "2023-12-31"),
    ("last 30 days", date(2024, 7, 31), "2024-07-01", "2024-07-31"),
])
def test_relative_phrases_resolve_against_the_reference_day(phrase, as_of, since, until):
    window, text = resolve_window(f"what changed {phrase}?", as_of=as_of)
    assert (window.since, window.until) == (since, until)
    assert phrase not in text


def test_since_the_outage_anchors_on_the_outage_report(sample_workspace):
    result = retrieve(sample_workspace, "What changed about Redis since the login outage?", mode="hybrid", k=5,
                      as_of="2024-07-15")
    assert result.stats.time_window.window.since == "2024-05-02"
    assert result.hits and all(h.time[:10] >= "2024-05-02" for h in result.hits)


def test_a_bad_day_is_named():
    with pytest.raises(TimeWindowError, match="since 'yesterdayish'"):
        resolve_window("x", since="yesterdayish")


def test_chat_logs_give_episodes_with_participants_and_timed_decisions(sample_workspace):
    episodes = sample_workspace.episodes()
    assert len(episodes) == 2
    for episode in episodes:
        assert episode.participants and episode.decisions
        assert all(d.time and d.chunk_id for d in episode.decisions)
        chunks = {c.id: c.text for c in sample_workspace.chunks([d.chunk_id for d in episode.decisions])}
        assert all(d.text in chunks[d.chunk_id] for d in episode.decisions)
    incident = next(e for e in episodes if e.document.endswith("incident-channel.jsonl"))
    assert "@sam.okafor" in dict(incident.participants)
    assert any("go for the rollback" in d.text for d in incident.decisions)


def test_the_episodes_command_finds_the_sessions_that_hold_a_text(sample_workspace, capsys):
    from workbench.cli import main

    assert main(["--workspace", str(sample_workspace.path), "episodes", "--find", "GO FOR THE ROLLBACK", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)["episodes"]
    assert [e["document"].rsplit("/", 1)[-1] for e in found] == ["incident-channel.jsonl"]
    assert main(["--workspace", str(sample_workspace.path), "episodes", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["episodes"]) == 2
    assert main(["--workspace", str(sample_workspace.path), "episodes", "--find", "no such words"]) == 0
    assert capsys.readouterr().out.strip() == "no episode of 2 holds 'no such words'"


def test_a_long_pause_splits_a_chat_into_two_sessions(make_workspace, tmp_path):
    corpus = tmp_path / "chat"
    corpus.mkdir()
    lines = [{"speaker": "@a", "text": "Redis memory alert fired again.", "timestamp": "2024-05-02T09:00:00Z"},
             {"speaker": "@b", "text": "Let's raise maxmemory on Redis to 8 GB.", "timestamp": "2024-05-02T09:05:00Z"},
             {"speaker": "@a", "text": "Kafka lag is back to normal.", "timestamp": "2024-05-03T14:00:00Z"},
             {"speaker": "@c", "text": "We decided to keep Kafka retention at 14 days.", "timestamp": "2024-05-03T14:02:00Z"}]
    (corpus / "ops.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    ws = make_workspace()
    ws.ingest([corpus])
    episodes = ws.episodes()
    assert [len(e.chunk_ids) for e in episodes] == [2, 2]
    assert [dict(e.participants) for e in episodes] == [{"@a": 1, "@b": 1}, {"@a": 1, "@c": 1}]
    assert [len(e.decisions) for e in episodes] == [1, 1]


def test_changing_one_document_keeps_the_other_reports(make_workspace, tmp_path):
    corpus = tmp_path / "sample_corpus"
    shutil.copytree(SAMPLE, corpus)
    ws = make_workspace()
    ws.ingest([corpus])
    before = {r.id: r.signature for r in ws.communities()}
    assert len(before) >= 4
    search = corpus / "architecture" / "search-service.md"
    search.write_text(search.read_text(encoding="utf-8") + "\nThe search service calls the ranking service.\n",
                      encoding="utf-8")
    ws.ingest([corpus])
    summaries = ws.summaries()
    assert summaries.stored and summaries.kept >= 1 and summaries.built >= 1
    after = {r.id: r.signature for r in summaries.reports}
    unchanged = [i for i, sig in before.items() if after.get(i) == sig]
    assert 1 <= len(unchanged) < len(before) or summaries.built < len(summaries.reports)
    assert summaries.built < len(summaries.reports)
    assert any("Ranking service".casefold() in " ".join(r.members) or "rankingservice" in r.members
               for r in summaries.reports)


def test_cli_communities_timeline_and_global_query(sample_workspace, capsys):
    from workbench.cli import main

    ws = ["--workspace", str(sample_workspace.path)]
    assert main([*ws, "communities", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["communities"]
    assert len(listed) >= 4 and all(c["points"] for c in listed if c["size"] >= 5)
    assert main([*ws, "communities", listed[0]["id"]]) == 0
    assert listed[0]["title"] in capsys.readouterr().out
    assert main([*ws, "timeline", "redis", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["entity"] == "Redis"
    assert main([*ws, "query", THEMES, "--mode", "global", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert hits and all(h["why"]["point"] in h["text"] for h in hits)
    assert main([*ws, "query", SESSION_QUESTION, "--as-of", "2024-07-15", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["hits"] and all(h["time"].startswith("2024-06") for h in out["hits"])
    assert main([*ws, "query", "x", "--since", "June"]) == 2


def test_past_sync_max_passages_a_write_stores_no_reports_and_the_first_reader_stores_its_build(
        make_workspace, settings, tmp_path):
    from filelock import FileLock

    corpus = shutil.copytree(SAMPLE, tmp_path / "sample_corpus")
    bounded = settings.model_copy(update={"communities": settings.communities.model_copy(update={"sync_max_passages": 10})})
    ws = make_workspace(settings=bounded)
    ws.ingest([corpus])
    assert ws.store.count("chunks") > 10
    assert ws.store.meta(SUMMARIES_VERSION) is None  # the write step built nothing
    busy = FileLock(str(ws.path / "workspace.lock"))  # another process writing
    busy.acquire()
    try:
        built = ws.summaries()  # built when first asked for
        assert built.reports and all(r.points for r in built.reports) and built.built == len(built.reports)
        assert not built.stored and ws.store.meta(SUMMARIES_VERSION) is None  # kept in this process only
    finally:
        busy.release()
    assert ws.summaries().stored and ws.store.meta(SUMMARIES_VERSION)  # the lock is free: stored
    fresh = type(ws)(ws.path, settings=bounded, embedder=ws.embedder)
    try:
        read = fresh.summaries()
        assert read.stored and read.built == 0  # the next process reads them, nothing built
        assert [r.to_json() for r in read.reports] == [r.to_json() for r in built.reports]
        assert np.allclose(read.report_vectors, built.report_vectors)
        fresh.drop_summaries()  # what `bench scale` does before it times the first build
    finally:
        fresh.close()
    another = type(ws)(ws.path, settings=bounded, embedder=ws.embedder)
    try:
        again = another.summaries()
        assert again.built == len(built.reports) and [r.to_json() for r in again.reports] == \
            [r.to_json() for r in built.reports]
    finally:
        another.close()


def test_stored_summary_bodies_read_back_equal_even_where_orjson_refuses_them(tmp_path):
    import math

    from workbench.record.store import Store

    store = Store(tmp_path / "workspace.sqlite")
    plain = {"title": "Zürich and the token cache", "points": [{"chunk": "c1", "score": 0.25}], "size": 7}
    odd = {"score": float("nan"), "count": 2**70}  # the standard library writes both; orjson reads neither
    store.replace_summaries({"community": [("c-1", "s1", plain, None), ("c-2", "s2", odd, np.ones(3))]}, "mark", 1)
    (_, sig, body, vector), (_, _, odd_body, odd_vector) = store.summaries("community")
    assert (sig, body, vector) == ("s1", plain, None)
    assert math.isnan(odd_body["score"]) and odd_body["count"] == 2**70 and odd_vector.tolist() == [1.0] * 3


def test_past_sync_max_passages_the_episodes_are_split_without_detecting_communities(make_workspace, settings,
                                                                                      tmp_path, monkeypatch):
    import workbench.corpus.summaries as summaries

    corpus = shutil.copytree(SAMPLE, tmp_path / "sample_corpus")
    bounded = settings.model_copy(update={"communities": settings.communities.model_copy(update={"sync_max_passages": 10})})
    ws = make_workspace(settings=bounded)
    ws.ingest([corpus])

    def detecting(*args, **kwargs):
        raise AssertionError("the Timeline page waited for the communities (minutes at 61k passages)")

    monkeypatch.setattr(summaries, "build_reports", detecting)
    episodes = ws.episodes()
    assert len(episodes) == 2 and all(e.decisions for e in episodes)
    monkeypatch.undo()
    assert episodes == ws.summaries().episodes  # the same as the episodes built with the communities
    assert ws.episodes() == episodes  # now read from the summaries built in this process
