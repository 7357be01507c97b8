"""Declared front-matter relations and similar-note candidates."""

import numpy as np
import pytest

from workbench.extract.notes import DeclaredRelationExtractor, similar_note_candidates
from workbench.model import Chunk, DeclaredRelation, Document


def _note(relations):
    return Document("inc-42.md", "/n/inc-42.md", "Login outage", "markdown", "body", "h", relations=tuple(relations))


def _chunks():
    return [Chunk("c1", "inc-42.md", 1, "b", 2, 3), Chunk("c0", "inc-42.md", 0, "bo", 0, 2)]


def test_each_declared_relation_gives_one_triple_from_the_title():
    doc = _note([DeclaredRelation("resolved_by", "Fix token TTL"), DeclaredRelation("CAUSED_BY", "deploy-17.md")])
    triples = DeclaredRelationExtractor().extract(doc, _chunks()).triples
    assert [(t.subject, t.relation, t.object) for t in triples] == [
        ("Login outage", "RESOLVED_BY", "Fix token TTL"),
        ("Login outage", "CAUSED_BY", "deploy-17.md"),
    ]
    assert {(t.chunk_id, t.origin, t.confidence, t.subject_type, t.object_type) for t in triples} == {
        ("c0", "declared", 1.0, "note", "note")
    }


def test_document_without_relations_gives_nothing():
    found = DeclaredRelationExtractor().extract(_note([]), _chunks())
    assert (found.triples, found.problems) == ([], [])


def test_relations_without_a_chunk_are_a_problem():
    found = DeclaredRelationExtractor().extract(_note([DeclaredRelation("EXTENDS", "x")]), [])
    assert found.triples == [] and "no chunk" in found.problems[0]


def test_unknown_relation_type_is_kept_and_reported():
    found = DeclaredRelationExtractor().extract(_note([DeclaredRelation("inspired_by", "x")]), _chunks())
    assert [t.relation for t in found.triples] == ["INSPIRED_BY"]
    assert "INSPIRED_BY" in found.problems[0]


def test_similar_notes_above_threshold_are_candidates_with_cosine_confidence():
    embeddings = {"b.md": np.array([1.0, 0.1, 0.0]), "a.md": np.array([1.0, 0.0, 0.0]), "c.md": np.array([0.0, 0.0, 2.0])}
    titles = {"a.md": "A", "b.md": "B", "c.md": "C"}
    [triple] = similar_note_candidates(embeddings, titles, 0.9, first_chunk_ids={"a.md": "a0"})
    assert (triple.subject, triple.relation, triple.object, triple.origin, triple.chunk_id) == ("A", "SIMILAR_TO", "B", "candidate", "a0")
    assert triple.confidence == pytest.approx(1.0 / np.sqrt(1.01))


def test_no_candidates_below_threshold():
    embeddings = {"a": np.array([1.0, 0.0]), "b": np.array([0.0, 1.0])}
    assert similar_note_candidates(embeddings, {}, 0.5) == []
