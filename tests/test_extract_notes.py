"""Declared front-matter relations and similar-note candidates."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.extract.notes import DeclaredRelationExtractor, _similar_note_candidates_reference, similar_note_candidates
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


def _triples_key(triples):
    return [(t.subject, t.relation, t.object, t.chunk_id, t.origin) for t in triples]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 70), st.integers(1, 12), st.sampled_from([0.0, 0.2, 0.5, 0.75, 0.9]), st.integers(1, 9),
       st.integers(0, 2**31 - 1))
def test_blocked_search_equals_the_dense_reference_when_k_covers_every_pair(n, dim, threshold, block_rows, seed):
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, dim))
    vectors[rng.random(n) < 0.1] = 0.0  # a few notes without a direction
    embeddings = {f"n{i:03d}.md": v for i, v in enumerate(vectors)}
    titles = {key: key.upper() for key in embeddings}
    firsts = {key: key + "#0" for key in embeddings}
    fast = similar_note_candidates(embeddings, titles, threshold, firsts, k=max(n, 1), block_rows=block_rows)
    dense = _similar_note_candidates_reference(embeddings, titles, threshold, firsts)
    assert _triples_key(fast) == _triples_key(dense)
    assert [t.confidence for t in fast] == pytest.approx([t.confidence for t in dense], abs=1e-12)


@settings(max_examples=80, deadline=None)
@given(st.integers(2, 60), st.integers(1, 6), st.sampled_from([0.3, 0.9]), st.integers(0, 2**31 - 1))
def test_with_a_small_k_a_pair_is_kept_when_one_note_has_the_other_among_its_k_nearest(n, k, threshold, seed):
    # 0.3 leaves many pairs above the threshold in each block (partitioned rows), 0.9 few (sorted).
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, 3))
    embeddings = {f"n{i:03d}": v for i, v in enumerate(vectors)}
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    similarity = unit @ unit.T
    np.fill_diagonal(similarity, -np.inf)
    nearest = [set(np.argsort(-row, kind="stable")[:k].tolist()) for row in similarity]
    expected = {(f"n{i:03d}", f"n{j:03d}") for i in range(n) for j in range(i + 1, n)
                if similarity[i, j] >= threshold and (j in nearest[i] or i in nearest[j])}
    found = similar_note_candidates(embeddings, {}, threshold, k=k, block_rows=7)
    assert {(t.subject, t.object) for t in found} == expected
    assert len(found) <= n * k

