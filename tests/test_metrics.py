"""IR metrics and the paired bootstrap, against hand-computed answers."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.evaluate.bootstrap import paired_bootstrap_ci, win_tie_loss
from workbench.evaluate.metrics import (
    EmptyRelevantSet,
    all_found,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
)

RANKED = ["a", "b", "c", "d", "e"]
RELEVANT = {"b", "d", "z"}


def test_recall_counts_relevant_found_in_top_k():
    assert recall_at_k(RANKED, RELEVANT, 1) == 0.0
    assert recall_at_k(RANKED, RELEVANT, 2) == pytest.approx(1 / 3)
    assert recall_at_k(RANKED, RELEVANT, 5) == pytest.approx(2 / 3)


def test_precision_divides_by_k_even_when_the_list_is_shorter():
    assert precision_at_k(RANKED, RELEVANT, 4) == pytest.approx(2 / 4)
    assert precision_at_k(["b"], RELEVANT, 5) == pytest.approx(1 / 5)


def test_reciprocal_rank_is_one_over_first_relevant_rank():
    assert reciprocal_rank(RANKED, RELEVANT) == pytest.approx(1 / 2)
    assert reciprocal_rank(["x", "y"], RELEVANT) == 0.0
    assert reciprocal_rank(RANKED, {"d"}, k=3) == 0.0
    assert reciprocal_rank(RANKED, {"d"}, k=4) == pytest.approx(1 / 4)


def test_ndcg_hand_computed_example():
    # DCG = 1/log2(2) + 1/log2(4) = 1.5; IDCG = 1/log2(2) + 1/log2(3) = 1.6309...
    expected = 1.5 / (1 + 1 / math.log2(3))
    assert ndcg_at_k(["a", "b", "c"], {"a", "c"}, 3) == pytest.approx(expected)
    assert expected == pytest.approx(0.9197, abs=1e-4)


def test_ndcg_ideal_is_cut_at_k_when_more_relevant_than_k():
    # k=2 with 3 relevant: IDCG = 1 + 1/log2(3); hit only at rank 2 -> DCG = 1/log2(3)
    expected = (1 / math.log2(3)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(["x", "a", "b", "c"], {"a", "b", "c"}, 2) == pytest.approx(expected)


def test_ndcg_of_a_perfect_ranking_is_one_and_of_no_hit_zero():
    assert ndcg_at_k(["a", "c", "x"], {"a", "c"}, 3) == pytest.approx(1.0)
    assert ndcg_at_k(["x", "y"], {"a"}, 2) == 0.0


def test_all_found_needs_every_relevant_id_in_top_k():
    assert all_found(RANKED, {"b", "d"}, 4) is True
    assert all_found(RANKED, {"b", "d"}, 3) is False
    assert all_found(RANKED, RELEVANT, 5) is False


def test_duplicates_count_once_and_take_no_place():
    ranked = ["a", "a", "b", "a"]
    assert recall_at_k(ranked, {"a", "b"}, 2) == 1.0
    assert precision_at_k(ranked, {"a"}, 2) == pytest.approx(1 / 2)
    assert ndcg_at_k(ranked, {"a", "b"}, 2) == pytest.approx(1.0)
    assert reciprocal_rank(["x", "x", "a"], {"a"}) == pytest.approx(1 / 2)


def test_relevant_may_be_any_iterable():
    assert recall_at_k(RANKED, ["b", "b", "d"], 5) == 1.0


@pytest.mark.parametrize("metric", [recall_at_k, precision_at_k, ndcg_at_k, all_found, reciprocal_rank])
def test_empty_relevant_set_is_an_error(metric):
    with pytest.raises(EmptyRelevantSet, match="at least one relevant id"):
        metric(RANKED, set(), 3)
    assert issubclass(EmptyRelevantSet, ValueError)


@pytest.mark.parametrize("metric", [recall_at_k, precision_at_k, ndcg_at_k, all_found])
def test_k_below_one_is_an_error(metric):
    with pytest.raises(ValueError, match="k must be >= 1"):
        metric(RANKED, RELEVANT, 0)


ids = st.sampled_from("abcdefgh")


@given(st.lists(ids, max_size=10), st.sets(ids, min_size=1), st.integers(1, 12))
def test_metrics_stay_between_zero_and_one(ranked, relevant, k):
    for metric in (recall_at_k, precision_at_k, ndcg_at_k, reciprocal_rank):
        assert 0.0 <= metric(ranked, relevant, k) <= 1.0 + 1e-12


@given(st.lists(ids, max_size=10), st.sets(ids, min_size=1), st.integers(1, 12))
def test_all_found_matches_full_recall(ranked, relevant, k):
    assert all_found(ranked, relevant, k) == (recall_at_k(ranked, relevant, k) == 1.0)


# --- paired bootstrap -------------------------------------------------------------------


def test_equal_deltas_collapse_the_interval():
    mean, low, high = paired_bootstrap_ci([0.25] * 30)
    assert mean == pytest.approx(0.25)
    assert low == pytest.approx(0.25) and high == pytest.approx(0.25)


def test_one_delta_gives_a_point():
    assert paired_bootstrap_ci([0.4]) == (0.4, 0.4, 0.4)


def test_no_deltas_is_an_error():
    with pytest.raises(ValueError, match="at least one delta"):
        paired_bootstrap_ci([])


def test_non_finite_delta_and_bad_confidence_are_errors():
    with pytest.raises(ValueError, match="finite"):
        paired_bootstrap_ci([0.1, float("nan")])
    with pytest.raises(ValueError, match="confidence"):
        paired_bootstrap_ci([0.1, 0.2], confidence=1.0)


def test_same_seed_gives_the_same_interval_and_another_seed_may_not():
    deltas = [0.3, -0.1, 0.2, 0.0, 0.5, -0.2, 0.1, 0.4]
    assert paired_bootstrap_ci(deltas, seed=7) == paired_bootstrap_ci(deltas, seed=7)
    assert paired_bootstrap_ci(deltas, seed=7) != paired_bootstrap_ci(deltas, seed=8)


def test_clearly_positive_deltas_give_an_interval_above_zero():
    deltas = [0.2, 0.3, 0.25, 0.1, 0.4, 0.15, 0.3, 0.2, 0.35, 0.05]
    mean, low, high = paired_bootstrap_ci(deltas)
    assert mean == pytest.approx(sum(deltas) / len(deltas))
    assert 0 < low < mean < high <= max(deltas)


def test_mixed_deltas_give_an_interval_around_zero():
    deltas = [0.3, -0.3, 0.2, -0.2, 0.1, -0.1, 0.0]
    _, low, high = paired_bootstrap_ci(deltas)
    assert low < 0 < high


def test_higher_confidence_gives_a_wider_interval():
    deltas = [0.3, -0.1, 0.2, 0.0, 0.5, -0.2, 0.1, 0.4]
    _, low90, high90 = paired_bootstrap_ci(deltas, confidence=0.9)
    _, low99, high99 = paired_bootstrap_ci(deltas, confidence=0.99)
    assert low99 <= low90 and high90 <= high99


def test_win_tie_loss_counts_with_tolerance():
    assert win_tie_loss([0.5, 1e-12, -1e-12, -0.5, 0.0, 0.1]) == (2, 3, 1)
    assert win_tie_loss([0.05, -0.05], eps=0.1) == (0, 2, 0)
    assert win_tie_loss([]) == (0, 0, 0)
