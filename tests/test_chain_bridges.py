"""The second hop of a chain: title aliases link a short form to its titled passage, and graphrag
places the linked passage that answers what the question asks beside its names after its start."""

from __future__ import annotations

import json

import pytest

from workbench.context_graph.passages import link_passages
from workbench.context_graph.title_aliases import MAX_TITLES_PER_ALIAS, title_aliases
from workbench.retrieve import retrieve

#: Passages as a 2WikiMultiHopQA corpus writes them (invented where shortened): the song's passage
#: names its composer; the novel and the film share the song's title words, so they are far more
#: similar to the question as a whole than the composer's passage is.
PASSAGES = {
    "song": ("The Trail of the Lonesome Pine (song)",
             "The Trail of the Lonesome Pine is a popular song published in 1913, with lyrics by Ballard MacDonald and "
             "music by Harry Carroll. It was inspired by John Fox Jr.'s novel The Trail of the Lonesome Pine."),
    "novel": ("The Trail of the Lonesome Pine",
              "The Trail of the Lonesome Pine is a 1908 novel by John Fox Jr. set in the Blue Ridge Mountains."),
    "film": ("The Trail of the Lonesome Pine (1936 film)",
             "The Trail of the Lonesome Pine is a 1936 film based on the novel The Trail of the Lonesome Pine."),
    "composer": ("Harry Carroll (songwriter)",
                 "Harry Carroll (November 28, 1892, in Atlantic City, New Jersey - December 26, 1962) was an American "
                 "songwriter, pianist and composer."),
    "lyricist": ("Ballard MacDonald", "Ballard MacDonald was an American lyricist of Tin Pan Alley."),
    "novelist": ("John Fox Jr.", "John Fox Jr. was an American journalist, novelist and short story writer."),
}
QUESTION = "Where was the composer of song The Trail Of The Lonesome Pine (Song) born?"


@pytest.fixture(scope="module")
def chain_workspace(tmp_path_factory, embedder, settings):
    from workbench.workspace import Workspace

    folder = tmp_path_factory.mktemp("chain")
    corpus = folder / "corpus"
    corpus.mkdir()
    lines = [json.dumps({"id": pid, "title": title, "text": f"{title}\n{text}"}) for pid, (title, text) in PASSAGES.items()]
    (corpus / "passages.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    ws = Workspace(folder / "ws", settings=settings, embedder=embedder)
    ws.ingest([corpus / "passages.jsonl"])
    yield ws
    ws.close()


def _passage(hit) -> str:
    return hit.document.split("#", 1)[1]


def test_a_qualified_title_is_written_by_its_short_forms():
    assert title_aliases("Tim McCann (director)") == ["Tim McCann"]
    assert title_aliases("Elizabeth Fitzalan, Duchess of Norfolk") == ["Elizabeth Fitzalan"]
    assert title_aliases("Prince Wilhelm of Prussia (1783–1851)") == ["Prince Wilhelm of Prussia", "Prince Wilhelm"]
    assert title_aliases("Redis") == [] and title_aliases("(unclosed") == []


def _layer(titles: dict[str, str], texts: dict[str, str]):
    """The passage layer of one chunk per title (chunk id = title key) and the chunks ``texts``."""
    forms = {key: [title] for key, title in titles.items()}
    chunks = [(key, title) for key, title in titles.items()] + list(texts.items())
    return link_passages(chunks, {}, forms, {key: key for key in titles})


def test_a_passage_naming_a_short_form_links_to_the_titled_passage():
    layer = _layer({"whiterabbit(film)": "White Rabbit (film)", "timmccann(director)": "Tim McCann (director)"},
                   {"c1": "White Rabbit is a 2013 film directed by Tim McCann."})
    assert ("c1", "timmccann(director)") in layer.title_links
    assert ("c1", "whiterabbit(film)") in layer.title_links  # "White Rabbit" names the film's title too


def test_a_short_form_of_too_many_titles_links_none_of_them():
    kingdoms = ["Württemberg", "Prussia", "Orange", "Scotland"][:MAX_TITLES_PER_ALIAS + 1]
    titles = {f"williami{k.lower()}": f"William I of {k}" for k in kingdoms}
    layer = _layer(titles, {"c1": "Her father was William I, who ruled from 1816."})
    assert [link for link in layer.title_links if link[0] == "c1"] == []
    two = _layer(dict(list(titles.items())[:2]), {"c1": "Her father was William I, who ruled from 1816."})
    assert {target for source, target in two.title_links if source == "c1"} == set(list(titles)[:2])


def test_a_short_form_that_is_a_title_names_only_that_title():
    layer = _layer({"orhan": "Orhan", "orhan(band)": "Orhan (band)"}, {"c1": "His father Orhan ruled Bursa."})
    assert {target for source, target in layer.title_links if source == "c1"} == {"orhan"}


def test_graphrag_places_the_composer_after_the_song_that_names_him(chain_workspace):
    result = retrieve(chain_workspace, QUESTION, mode="graphrag", k=5)
    assert result.mode_used == "full_graphrag"
    assert [_passage(h) for h in result.hits[:2]] == ["song", "composer"]
    bridge = result.hits[1]
    assert bridge.why.via == "bridge" and bridge.why.parent == result.hits[0].chunk_id
    assert "names its title" in bridge.why.describe()
    assert "bridges" in result.stats.seconds


def test_without_bridges_the_title_words_outrank_the_composer(chain_workspace):
    from tests.conftest import reopened

    plain = reopened(chain_workspace, graphrag__bridges_per_start=0)
    try:
        result = retrieve(plain, QUESTION, mode="graphrag", k=5)
        ranked = [_passage(h) for h in result.hits]
        assert ranked[0] == "song" and ranked.index("composer") > 1
        assert all(h.why.via != "bridge" for h in result.hits)
    finally:
        plain.close()
