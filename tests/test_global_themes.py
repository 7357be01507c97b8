"""Global mode asked for the themes answers with the themes, largest first, each with its cited
points; a report's points are whole sentences, also in prose wrapped at a fixed width."""

from __future__ import annotations

import re
import textwrap

from tests.conftest import SAMPLE
from workbench.corpus.community_reports import report_order
from workbench.text.sentences import split_sentences
from workbench.retrieve import retrieve

THEMES = "What are the main themes of the corpus?"


def test_a_themes_question_is_answered_with_the_themes_largest_first(sample_workspace):
    ws = sample_workspace
    result = retrieve(ws, THEMES, mode="global", k=10)
    themes = sorted((r for r in ws.communities() if r.level == 0), key=report_order)
    assert len(themes) >= 4 and result.graph_context.themes
    listed = result.graph_context.communities
    assert [c.id for c in listed] == [t.id for t in themes]  # every theme, largest first
    assert [c.size for c in listed] == sorted((c.size for c in listed), reverse=True)
    assert "largest first" in result.reason
    chunks = {c.id: c for c in ws.chunks([cid for c in listed for cid in c.citations])}
    for theme in listed:
        assert len(theme.points) >= 2 and len(theme.citations) == len(theme.points), theme
        for point, cited in zip(theme.points, theme.citations):
            assert point in chunks[cited].text
    # The hits keep the contract: at most k, best first, each the chunk a listed point quotes.
    assert len(result.hits) == 10 and [h.rank for h in result.hits] == list(range(1, 11))
    cited = {(c.id, cid) for c in listed for cid in c.citations}
    assert all((h.why.community, h.chunk_id) in cited for h in result.hits)
    assert [h.why.community for h in result.hits] == [c.id for c in listed][:10]  # one point each, largest first


def test_a_question_about_one_thing_is_not_a_themes_answer(sample_workspace):
    result = retrieve(sample_workspace, "How does the login flow relate to Redis?", mode="global", k=6)
    assert result.hits and not result.graph_context.themes


def test_query_prints_the_themes_with_their_cited_points(sample_workspace, capsys):
    from workbench.cli import main

    assert main(["--workspace", str(sample_workspace.path), "query", "--mode", "global", THEMES]) == 0
    out = capsys.readouterr().out
    themes = sorted((r for r in sample_workspace.communities() if r.level == 0), key=report_order)
    numbered = re.findall(r"^(\d+)\. (.+) \((\d+) entities", out, flags=re.M)
    assert [(int(n), title, int(size)) for n, title, size in numbered] == \
        [(i, t.title, t.size) for i, t in enumerate(themes, 1)]
    assert re.search(r"^   - .+ \[[0-9a-f]{16}\]$", out, flags=re.M)
    assert "rank  score" not in out  # the themes, not a table of chunks


def test_split_sentences_keeps_a_wrapped_sentence_whole():
    text = ("The reporting pipeline reads every receipt from Kafka and\nwrites hourly Parquet files to S3.\n"
            "# Owners\nData team: @noor.haddad leads the team\n- Redis\n- Kafka\n"
            "Short title\nThe next line is a sentence of its own.")
    assert split_sentences(text) == [
        "The reporting pipeline reads every receipt from Kafka and\nwrites hourly Parquet files to S3.",
        "Owners", "Data team: @noor.haddad leads the team", "Redis", "Kafka", "Short title",
        "The next line is a sentence of its own."]


def _wrapped(text: str) -> str:
    """``text`` with every long prose line wrapped at 72 columns (front matter, headings and list
    items as they are)."""
    head = ""
    if text.startswith("---"):
        end = text.index("\n---", 3) + 4
        head, text = text[:end], text[end:]
    lines = []
    for line in text.split("\n"):
        block = re.match(r"\s*(?:[#>|`]|[-*+][ ]|\d+[.)][ ]|(?:\w+[ ]){0,2}\w+:[ ])", line)
        lines.append(line if block or len(line) <= 72 else textwrap.fill(line, 72))
    return head + "\n".join(lines)


def test_report_points_are_whole_sentences_of_wrapped_prose(make_workspace, tmp_path):
    corpus = tmp_path / "wrapped"
    sentences = set()
    for source in SAMPLE.rglob("*"):
        if source.suffix in (".md", ".txt"):
            text = source.read_text(encoding="utf-8")
            sentences.update(" ".join(s.split()) for s in split_sentences(text))
            target = corpus / source.relative_to(SAMPLE)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(_wrapped(text), encoding="utf-8")
    assert sum(text.count("\n") for text in (p.read_text(encoding="utf-8") for p in corpus.rglob("*.md"))) > \
        sum(text.count("\n") for text in (p.read_text(encoding="utf-8") for p in SAMPLE.rglob("*.md"))) + 50
    ws = make_workspace()
    ws.ingest([corpus])
    points = [p for r in ws.communities() for p in r.points]
    assert len(points) >= 10
    wrapped = [p.text for p in points if "\n" in p.text]
    assert wrapped  # some point spans a line break of the wrapped text
    cut = [p.text for p in points if " ".join(p.text.split()) not in sentences]
    assert not cut, cut
