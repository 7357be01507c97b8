"""Reciprocal Rank Fusion: hand-computed scores, ties, duplicates and invariants."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.retrieve.fusion import rrf


def test_scores_are_sums_of_reciprocal_ranks():
    fused = dict(rrf([["a", "b", "c"], ["c", "a"]], rrf_k=60))
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["b"] == pytest.approx(1 / 62)
    assert fused["c"] == pytest.approx(1 / 63 + 1 / 61)


def test_order_is_by_fused_score():
    # k=1: a = 1/2 + 1/3, c = 1/4 + 1/2, b = 1/3
    assert [i for i, _ in rrf([["a", "b", "c"], ["c", "a"]], rrf_k=1)] == ["a", "c", "b"]


def test_equal_scores_keep_first_appearance_order():
    # a and c both score 1/61, b and d both 1/62; a and b appear first, in ranking one.
    fused = rrf([["a", "b"], ["c", "d"]])
    assert [i for i, _ in fused] == ["a", "c", "b", "d"]


def test_weights_scale_each_ranking():
    fused = dict(rrf([["a"], ["b"]], rrf_k=0, weights=[1.0, 3.0]))
    assert fused == {"b": 3.0, "a": 1.0}
    assert [i for i, _ in rrf([["a"], ["b"]], rrf_k=0, weights=[1.0, 3.0])] == ["b", "a"]


def test_duplicate_within_a_ranking_counts_once_at_its_best_rank():
    fused = dict(rrf([["a", "b", "a"]], rrf_k=0))
    assert fused == {"a": 1.0, "b": 0.5}


def test_no_rankings_give_an_empty_fusion():
    assert rrf([]) == []
    assert rrf([[], []]) == []


def test_wrong_number_of_weights_is_rejected():
    with pytest.raises(ValueError, match="2 weights for 1 rankings"):
        rrf([["a"]], weights=[1.0, 2.0])


def test_negative_weight_and_negative_k_are_rejected():
    with pytest.raises(ValueError, match="weights must be >= 0"):
        rrf([["a"]], weights=[-1.0])
    with pytest.raises(ValueError, match="k must be >= 0"):
        rrf([["a"]], rrf_k=-1)


rankings_strategy = st.lists(st.lists(st.sampled_from("abcdefghij"), max_size=12), max_size=5)


@given(rankings_strategy, st.integers(min_value=0, max_value=100))
def test_every_input_id_appears_exactly_once(rankings, rrf_k):
    fused_ids = [i for i, _ in rrf(rankings, rrf_k=rrf_k)]
    assert sorted(fused_ids) == sorted({i for ranking in rankings for i in ranking})


@given(rankings_strategy, st.integers(min_value=0, max_value=100))
def test_scores_are_positive_and_non_increasing(rankings, rrf_k):
    scores = [s for _, s in rrf(rankings, rrf_k=rrf_k)]
    assert all(s > 0 for s in scores)
    assert all(earlier >= later for earlier, later in zip(scores, scores[1:]))


@given(st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=10))
def test_fusing_one_ranking_keeps_its_order(ranking):
    assert [i for i, _ in rrf([ranking])] == ranking
