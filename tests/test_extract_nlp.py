"""The spaCy extractor: entities, proper-noun phrases and subject-verb-object relations from a
parse, its weights checked against their pinned digests, and an ingest that uses it."""

from __future__ import annotations

import shutil

import pytest

from workbench.extract.nlp import (PINNED_WEIGHTS, RELATION_CONFIDENCE, NLPExtractor, NLPUnavailable, _pipeline_path,
                                   check_weights)
from workbench.workspace.ingest_pipeline import pipeline_fingerprint
from workbench.model import Chunk, Document
from workbench.settings import Settings

FILM = "Three Violent People is a 1957 American Western film directed by Rudolph Maté and starring Charlton Heston."
TRIAL = ("The Stanford Retinal Gene Therapy Trial Phase II enrolled 40 patients in 2023. "
         "Wei Chen founded Helix Therapeutics in Boston.")


def extracted(text: str):
    document = Document("d", "/d", "d", "text", text, "h")
    return NLPExtractor().extract(document, [Chunk("c1", "d", 0, text, 0, len(text))])


def test_names_come_from_entities_and_proper_noun_phrases():
    found = extracted(FILM)
    names = {(m.surface, m.entity_type) for m in found.mentions}
    assert {("Three Violent People", "name"), ("Rudolph Maté", "person"), ("Charlton Heston", "person")} <= names
    assert all(m.chunk_id == "c1" and FILM[m.start:m.start + len(m.surface)] == m.surface for m in found.mentions)
    trial = {m.surface for m in extracted(TRIAL).mentions}
    assert "Stanford Retinal Gene Therapy Trial Phase II" in trial and "Wei Chen" in trial
    assert not trial & {"2023", "40"}  # dates and amounts are not names


def test_relations_come_from_the_dependency_parse():
    film = {(t.subject, t.relation, t.object) for t in extracted(FILM).triples}
    assert ("Three Violent People", "direct_by", "Rudolph Maté") in film
    trial = extracted(TRIAL).triples
    assert ("Wei Chen", "found", "Helix Therapeutics") in {(t.subject, t.relation, t.object) for t in trial}
    assert all(t.origin == "nlp" and t.confidence == RELATION_CONFIDENCE for t in trial)


def test_weights_that_are_not_the_pinned_ones_are_refused(tmp_path):
    check_weights(_pipeline_path())  # the installed ones pass
    copy = tmp_path / "pipeline"
    for member in PINNED_WEIGHTS:
        (copy / member).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(_pipeline_path() / member, copy / member)
    check_weights(copy)
    with (copy / "ner" / "model").open("r+b") as weights:
        weights.seek(100)
        byte = weights.read(1)
        weights.seek(100)
        weights.write(bytes([byte[0] ^ 1]))
    with pytest.raises(NLPUnavailable, match=r"ner/model: sha256 [0-9a-f]{64}, not the pinned"):
        check_weights(copy)
    (copy / "ner" / "model").unlink()
    with pytest.raises(NLPUnavailable, match="ner/model: sha256 missing"):
        check_weights(copy)


def test_switching_it_on_changes_the_fingerprint_and_off_keeps_the_old_one():
    on = Settings()
    on.extraction.nlp = True
    assert pipeline_fingerprint(on) != pipeline_fingerprint(Settings())
    assert '"nlp"' not in Settings().extraction.model_dump_json(exclude={"nlp"})


def test_an_ingest_with_nlp_on_puts_the_parsed_relation_in_the_graph(make_workspace, tmp_path):
    settings = Settings()
    settings.extraction.nlp = True
    ws = make_workspace(settings=settings)
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "film.md").write_text(f"# Three Violent People\n\n{FILM}\n", encoding="utf-8")
    ws.ingest([folder])
    graph = ws.graph
    edges = {(graph.name(e.source), e.relation, graph.name(e.target)) for e in graph.edges()}
    assert ("Three Violent People", "direct_by", "Rudolph Maté") in edges
