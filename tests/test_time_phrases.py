"""The time phrases people write (one test per family), the phrase that is not understood, and
the policy for undated documents under a window."""

from __future__ import annotations

from datetime import date

import pytest

from workbench.retrieve import retrieve
from workbench.retrieve.timewindow import read_time, resolve_window

JULY_17 = date(2024, 7, 17)  # a Wednesday
OUTAGE = date(2024, 5, 2)


def window_of(question: str, as_of: date = JULY_17) -> tuple[str | None, str | None, str]:
    reading = read_time(question, as_of=as_of, anchor=lambda event: OUTAGE if event == "login outage" else None)
    assert reading.window is not None, question
    assert not reading.not_understood, reading.not_understood
    return reading.window.since, reading.window.until, reading.text


@pytest.mark.parametrize("phrase, since, until", [
    ("last quarter", "2024-04-01", "2024-06-30"),
    ("this quarter", "2024-07-01", "2024-07-17"),
    ("in Q4 2023", "2023-10-01", "2023-12-31"),
    ("in Q3", "2024-07-01", "2024-09-30"),
    ("in Q4", "2023-10-01", "2023-12-31"),  # the latest Q4 begun by the reference day
    ("in the fourth quarter of 2022", "2022-10-01", "2022-12-31"),
    ("in H1", "2024-01-01", "2024-06-30"),
    ("in H2 2023", "2023-07-01", "2023-12-31"),
    ("in the first half of 2023", "2023-01-01", "2023-06-30"),
])
def test_quarters_and_halves(phrase, since, until):
    assert window_of(f"What did we decide {phrase}?") == (since, until, "What did we decide?")


@pytest.mark.parametrize("phrase, since", [
    ("in the past two weeks", "2024-07-03"),
    ("over the last three days", "2024-07-14"),
    ("in the past 30 days", "2024-06-17"),
    ("in the last couple of months", "2024-05-17"),
    ("over the past week", "2024-07-10"),
    ("in the past twelve months", "2023-07-17"),
])
def test_past_n_units_with_numbers_as_words(phrase, since):
    assert window_of(f"What changed {phrase}?") == (since, "2024-07-17", "What changed?")


@pytest.mark.parametrize("phrase, since, until", [
    ("two weeks ago", "2024-07-01", "2024-07-07"),  # the calendar week, Monday to Sunday
    ("3 days ago", "2024-07-14", "2024-07-14"),
    ("a month ago", "2024-06-01", "2024-06-30"),
    ("yesterday", "2024-07-16", "2024-07-16"),
    ("last week", "2024-07-08", "2024-07-14"),
    ("earlier this month", "2024-07-01", "2024-07-16"),
])
def test_ago_yesterday_last_week_and_earlier_this_month(phrase, since, until):
    assert window_of(f"What broke {phrase}?") == (since, until, "What broke?")


@pytest.mark.parametrize("phrase, since, until", [
    ("between March and May", "2024-03-01", "2024-05-31"),
    ("between November and February", "2023-11-01", "2024-02-29"),
    ("from March 2023 to May 2024", "2023-03-01", "2024-05-31"),
    ("between 2021 and 2022", "2021-01-01", "2022-12-31"),
    ("before the login outage", None, "2024-05-01"),
    ("after the login outage", "2024-05-02", None),
    ("before March", None, "2024-02-29"),
    ("after 2023", "2024-01-01", None),
])
def test_between_months_and_before_or_after_an_event(phrase, since, until):
    assert window_of(f"What changed {phrase}?") == (since, until, "What changed?")


def test_an_event_no_document_names_is_reported_not_read():
    reading = read_time("What changed after the migration?", as_of=JULY_17, anchor=lambda event: None)
    assert reading.window is None and reading.not_understood == ("after the migration",)
    assert resolve_window("How does Redis work after a restart?", as_of=JULY_17) == (None, "How does Redis work after a restart?")


INCIDENT = """---
title: "Incident: cache outage"
date: 2024-02-14
relations:
  - {type: RESOLVED_BY, target: cache-restart.md}
---
On 14 February the session cache stopped answering and every login failed for forty minutes.
"""
RUNBOOK = """---
title: Cache restart runbook
---
To bring the session cache back, drain the cache nodes one at a time, restart each, and warm it
from the session store before sending logins to it again.
"""
MAY = """---
title: "Incident: DNS failure"
date: 2024-05-20
---
In May a DNS change sent login traffic to a retired cache host for ten minutes.
"""
HANDBOOK = """---
title: Team handbook
---
The session cache team answers pages about the cache within fifteen minutes.
"""
OLD = """---
title: "Incident: cache outage of 2023"
date: 2023-02-10
---
In February 2023 the session cache ran out of memory and logins failed.
"""


@pytest.fixture(scope="module")
def incident_workspace(tmp_path_factory, embedder, settings):
    from workbench.workspace import Workspace

    corpus = tmp_path_factory.mktemp("incidents")
    for name, text in (("2024-02-14-cache-outage.md", INCIDENT), ("cache-restart.md", RUNBOOK),
                       ("2024-05-20-dns.md", MAY), ("handbook.md", HANDBOOK), ("2023-02-10-outage.md", OLD)):
        (corpus / name).write_text(text, encoding="utf-8")
    ws = Workspace(tmp_path_factory.mktemp("ws") / "ws", settings=settings, embedder=embedder)
    ws.ingest([corpus])
    yield ws
    ws.close()


def test_undated_runbook_a_february_incident_resolves_is_kept_after_the_dated_hits(incident_workspace):
    question = "How was the cache outage in February resolved?"
    for mode in ("expand", "hybrid"):
        result = retrieve(incident_workspace, question, mode=mode, k=5, as_of="2024-07-01")
        documents = [hit.document.rsplit("/", 1)[-1] for hit in result.hits]
        assert documents[0] == "2024-02-14-cache-outage.md", (mode, documents)
        assert "cache-restart.md" in documents, (mode, documents)  # RESOLVED_BY leads to it
        assert "handbook.md" not in documents and "2024-05-20-dns.md" not in documents  # nothing leads there
        assert "2023-02-10-outage.md" not in documents
        dated = [hit.time is not None for hit in result.hits]
        assert dated == sorted(dated, reverse=True)  # the undated after the dated
        assert result.stats.time_window.undated_kept == dated.count(False) >= 1
        assert "undated kept after them" in result.reason


def test_last_quarter_keeps_only_what_was_dated_in_it(incident_workspace):
    result = retrieve(incident_workspace, "What went wrong with logins last quarter?", mode="hybrid", k=3,
                      as_of="2024-07-15")
    assert result.hits and all("2024-04-01" <= hit.time[:10] <= "2024-06-30" for hit in result.hits)
    assert [hit.document.rsplit("/", 1)[-1] for hit in result.hits] == ["2024-05-20-dns.md"]
    assert result.stats.time_window.window.phrase == "last quarter"


def test_a_time_phrase_that_is_not_understood_is_named_in_the_reason_and_the_stats(incident_workspace):
    result = retrieve(incident_workspace, "What will break the cache next spring?", mode="hybrid", k=3,
                      as_of="2024-07-15")
    assert result.hits and result.stats.time_window is None
    assert result.stats.time_phrases_not_understood == ["next spring"]
    assert 'time phrase "next spring" not understood' in result.reason
    assert result.to_json()["stats"]["time_phrases_not_understood"] == ["next spring"]
