"""Communities as themes: on our own prose corpus (tests/data/team_corpus, labelled by theme), under
any hash seed and file order, in levels, titled by key phrases; and the global mode over them."""

from __future__ import annotations

import json
import random
import shutil

import pytest

from tests.conftest import ROOT, SAMPLE, run_cli
from workbench.corpus.communities import detect_communities
from workbench.evaluate.themes import documents_by_community, theme_match
from workbench.context_graph.graph import ContextGraph
from workbench.corpus.keyphrases import content_words
from workbench.model import Edge, Entity
from workbench.retrieve import retrieve

TEAM = ROOT / "tests" / "data" / "team_corpus"
LABELS = json.loads((ROOT / "tests" / "data" / "team_corpus.themes.json").read_text(encoding="utf-8"))
THEMES = "What are the main themes across all documents?"


@pytest.fixture(scope="module")
def team(tmp_path_factory, embedder, settings):
    from workbench.workspace import Workspace

    corpus = tmp_path_factory.mktemp("team") / "team_corpus"
    shutil.copytree(TEAM, corpus)
    ws = Workspace(tmp_path_factory.mktemp("team_ws") / "ws", settings=settings, embedder=embedder)
    ws.ingest([corpus])
    yield ws
    ws.close()


def label_of(document: str) -> str:
    return LABELS[document.rsplit("/", 1)[-1]]


def match(ws):
    reports = ws.communities()
    document_of = {c: d.rsplit("/", 1)[-1] for c, d in ws.graph.passages_document.items()}
    return theme_match(documents_by_community(reports, document_of), LABELS)


def test_the_team_corpus_has_forty_documents_in_five_themes_or_more():
    assert len(LABELS) >= 40 and len(set(LABELS.values())) >= 5
    assert {p.name for p in TEAM.iterdir()} == set(LABELS)


def test_communities_match_the_themes_of_the_team_corpus(team):
    m = match(team)
    assert m.documents == len(LABELS) and m.coverage >= 0.95
    assert m.purity >= 0.85 and m.nmi >= 0.75, m.to_json()
    assert {row["majority"] for row in m.table} == set(LABELS.values())  # every theme leads a community


def test_themes_have_sub_themes_inside_them(team):
    reports = team.communities()
    themes = {r.id: r for r in reports if r.level == 0}
    parts = [r for r in reports if r.level == 1]
    assert len(parts) >= 4 and all(r.parent in themes for r in parts)
    for part in parts:
        parent = themes[part.parent]
        assert set(part.members) < set(parent.members) and set(part.chunks) <= set(parent.chunks)
        assert len(part.chunks) >= 2
    by_parent = [r.parent for r in parts]
    assert max(by_parent.count(t) for t in themes) >= 2  # a theme split in two or more


def test_titles_are_distinctive_key_phrases_not_names(team):
    themes = [r for r in team.communities() if r.level == 0]
    titles = " | ".join(r.title for r in themes)
    for phrase in ("partner export", "data quality", "churn", "budget"):
        assert phrase in titles.casefold(), titles
    people = {"priya", "raman", "tomás", "herrera", "aiko", "tanaka", "ben", "carter", "maya", "lindqvist"}
    assert not any(set(r.title.casefold().split()) & people for r in themes), titles
    # One phrase a person would write, a key phrase itself; the others are listed beneath it.
    assert all(r.key_phrases and r.title.casefold() in {p for p, _ in r.key_phrases} and ", " not in r.title
               and r.title[:1].isupper() for r in themes), titles


def test_points_are_informative_sentences_of_their_cited_chunks(team):
    points = [p for r in team.communities() for p in r.points]
    assert len(points) >= 20
    chunks = {c.id: c for c in team.chunks([p.chunk_id for p in points])}
    for point in points:
        assert point.text in chunks[point.chunk_id].text and chunks[point.chunk_id].document_id == point.document
        assert len(set(content_words(point.text))) >= 3, point.text
    acknowledgements = ("OK", "Sounds good", "Thanks", "Sure", "Great, thank you")
    assert not any(p.text.startswith(acknowledgements) and len(p.text) < 30 for p in points)


def test_global_k8_covers_at_least_four_themes_with_cited_points(team):
    result = retrieve(team, THEMES, mode="global", k=8)
    assert result.mode_used == "global" and len(result.hits) == 8
    assert len({label_of(h.document) for h in result.hits}) >= 4
    reports = {r.id: r for r in team.communities()}
    themes = {reports[h.why.community].parent or h.why.community for h in result.hits}
    assert len(themes) == 8 or len(themes) == len([r for r in reports.values() if r.level == 0])
    for hit in result.hits:
        assert hit.why.point in hit.text and hit.why.community_title


def test_a_question_naming_a_theme_narrows_to_it(team):
    result = retrieve(team, "What did we decide about the partner export?", mode="global", k=6)
    assert len(result.hits) == 6 and "names the theme" in result.reason
    reports = {r.id: r for r in team.communities()}
    theme = next(r for r in reports.values() if r.level == 0 and "partner export" in r.title.casefold())
    assert all(h.chunk_id in theme.chunks for h in result.hits)
    assert {h.why.community for h in result.hits} <= {theme.id} | {r.id for r in reports.values() if r.parent == theme.id}
    assert [label_of(h.document) for h in result.hits].count("export") >= 5
    budget = retrieve(team, "How did the cloud budget develop over the year?", mode="global", k=5)
    assert "names the theme" in budget.reason
    assert [label_of(h.document) for h in budget.hits].count("budget") >= 4


def test_global_never_gives_fewer_than_k_while_material_remains(team):
    passages = {c for r in team.communities() if r.level == 0 for c in r.chunks}
    k = len(passages) - 3
    result = retrieve(team, THEMES, mode="global", k=k)
    assert len(result.hits) == k and len({h.chunk_id for h in result.hits}) == k
    beyond = [h for h in result.hits if h.why.point_kind == "passage"]  # past the reports' points
    assert beyond and all(h.why.point in h.text for h in result.hits)
    assert "a passage of the community" in beyond[0].why.describe().casefold()
    everything = retrieve(team, THEMES, mode="global", k=len(passages) + 50)
    assert len(everything.hits) == len(passages)
    narrowed = retrieve(team, "What did we decide about the partner export?", mode="global", k=200)
    theme = next(r for r in team.communities() if r.level == 0 and "partner export" in r.title.casefold())
    assert len(narrowed.hits) == len(theme.chunks)


def test_cli_lists_themes_with_their_sub_themes(team, capsys):
    from workbench.cli import main

    assert main(["--workspace", str(team.path), "communities"]) == 0
    out = capsys.readouterr().out
    assert "sub-theme" in out and "theme" in out
    assert main(["--workspace", str(team.path), "communities", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["communities"]
    levels = [c["level"] for c in listed]
    assert 0 in levels and 1 in levels
    # each sub-theme is listed right after its theme or a sibling
    for i, c in enumerate(listed):
        if c["level"] == 1:
            assert listed[i - 1]["id"] == c["parent"] or listed[i - 1]["parent"] == c["parent"]


def _shuffled_graph(rng: random.Random) -> ContextGraph:
    names = [f"n{i:02d}" for i in range(24)]
    edges = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]
             if int(a[1:]) // 8 == int(b[1:]) // 8 or (int(a[1:]) + int(b[1:])) % 11 == 0]
    entities = [Entity(n, n.upper()) for n in names]
    rng.shuffle(entities)
    rng.shuffle(edges)
    return ContextGraph(entities, [Edge(a, "uses", b, chunk_ids=(f"c{a}{b}",)) for a, b in edges])


def test_detection_does_not_depend_on_the_order_entities_and_edges_come_in():
    found = [[(sorted(c.members), c.level) for c in detect_communities(_shuffled_graph(random.Random(s)), min_size=3)]
             for s in range(5)]
    assert found[0] and all(f == found[0] for f in found)
    assert [members for members, level in found[0] if level == 0] == [
        [f"n{i:02d}" for i in range(j, j + 8)] for j in (0, 8, 16)]  # the three cliques


def test_communities_are_the_same_under_any_hash_seed_and_file_order(tmp_path):
    corpus = tmp_path / "sample_corpus"
    shutil.copytree(SAMPLE, corpus)
    parts = sorted(corpus.iterdir())
    runs = []
    for seed, order in (("1", parts), ("2", random.Random(5).sample(parts, len(parts)))):
        ws = tmp_path / f"ws{seed}"
        done = run_cli("--workspace", ws, "ingest", *order, env={"PYTHONHASHSEED": seed})
        assert done.returncode == 0, done.stderr
        listed = run_cli("--workspace", ws, "communities", "--json", env={"PYTHONHASHSEED": seed})
        assert listed.returncode == 0, listed.stderr
        runs.append([{k: c[k] for k in ("id", "level", "parent", "members", "chunks", "title", "points")}
                     for c in json.loads(listed.stdout)["communities"]])
    assert len([c for c in runs[0] if c["level"] == 0]) >= 4
    assert runs[0] == runs[1]
