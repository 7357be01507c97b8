"""Personalized PageRank: the sparse index against networkx and the dict-based reference."""

from __future__ import annotations

import random
import time

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.context_graph.ppr import PageRankIndex, PageRankNotConverged, pagerank_reference


def random_graph(seed: int, directed: bool, n: int = 60, m: int = 150, multi: bool = False) -> nx.Graph:
    """A seeded random weighted graph with isolated nodes (and, directed, dangling ones)."""
    rng = random.Random(seed)
    base = nx.gnm_random_graph(n, m, seed=seed, directed=directed)
    graph_type = {
        (False, False): nx.Graph, (True, False): nx.DiGraph,
        (False, True): nx.MultiGraph, (True, True): nx.MultiDiGraph,
    }[(directed, multi)]
    graph = graph_type()
    graph.add_nodes_from(base)
    graph.add_nodes_from(range(n, n + 5))  # isolated nodes
    for u, v in base.edges():
        graph.add_edge(u, v, weight=rng.randint(1, 5))
        if multi and rng.random() < 0.3:
            graph.add_edge(u, v, weight=rng.randint(1, 5))
    return graph


def personalizations(graph: nx.Graph, seed: int) -> list[dict]:
    rng = random.Random(seed)
    nodes = list(graph)
    return [
        {nodes[0]: 1.0},
        {node: rng.random() for node in rng.sample(nodes, 5)},
        {node: 1.0 for node in nodes},
        {nodes[-1]: 2.0},  # an isolated node alone
    ]


def assert_scores_close(actual: dict, expected: dict, tol: float = 1e-6) -> None:
    assert actual.keys() == expected.keys()
    worst = max(abs(actual[n] - expected[n]) for n in expected)
    assert worst < tol, f"largest difference {worst}"


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("multi", [False, True])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_index_matches_networkx_pagerank(seed, directed, multi):
    graph = random_graph(seed, directed, multi=multi)
    if directed:
        assert any(graph.out_degree(n) == 0 and graph.in_degree(n) > 0 for n in graph), "want a dangling node"
    index = PageRankIndex(graph)
    for p in personalizations(graph, seed):
        for alpha in (0.5, 0.85):
            expected = nx.pagerank(graph, alpha=alpha, personalization=p, dangling=None)
            assert_scores_close(index.run(p, alpha=alpha), expected)


@pytest.mark.parametrize("directed", [False, True])
def test_unweighted_index_matches_networkx_pagerank(directed):
    graph = random_graph(7, directed)
    p = {0: 1.0, 3: 1.0}
    expected = nx.pagerank(graph, personalization=p, weight=None)
    assert_scores_close(PageRankIndex(graph, weight=None).run(p), expected)


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("seed", [4, 5])
def test_reference_matches_index(seed, directed):
    graph = random_graph(seed, directed, n=40, m=90)
    index = PageRankIndex(graph)
    for p in personalizations(graph, seed):
        assert_scores_close(pagerank_reference(graph, p), index.run(p), tol=1e-9)


def test_reference_matches_networkx_on_multigraph_with_self_loop():
    graph = random_graph(8, directed=False, n=30, m=60, multi=True)
    graph.add_edge(2, 2, weight=3)
    p = {2: 1.0, 5: 0.5}
    assert_scores_close(pagerank_reference(graph, p), nx.pagerank(graph, personalization=p))
    assert_scores_close(PageRankIndex(graph).run(p), nx.pagerank(graph, personalization=p))


def test_known_answer_on_a_three_cycle():
    # Solving x = 0.85 * shift(x) + 0.15 * e_a on a->b->c->a gives x_a = 0.15 / (1 - 0.85**3).
    graph = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "a")])
    scores = PageRankIndex(graph).run({"a": 1.0}, tol=1e-12, max_iter=1000)
    x_a = 0.15 / (1 - 0.85**3)
    assert scores["a"] == pytest.approx(x_a, abs=1e-9)
    assert scores["b"] == pytest.approx(0.85 * x_a, abs=1e-9)
    assert scores["c"] == pytest.approx(0.85**2 * x_a, abs=1e-9)


def test_dangling_node_returns_its_mass_to_the_personalization():
    # b is dangling: everything it holds goes back to a, the only personalized node.
    graph = nx.DiGraph([("a", "b")])
    scores = PageRankIndex(graph).run({"a": 1.0}, tol=1e-12, max_iter=1000)
    # x_a = 0.15 + 0.85 * x_b, x_b = 0.85 * x_a  ->  x_a = 0.15 / (1 - 0.85**2)
    assert scores["a"] == pytest.approx(0.15 / (1 - 0.85**2), abs=1e-9)
    assert scores["a"] + scores["b"] == pytest.approx(1.0)


def test_personalization_is_normalised_and_unknown_nodes_ignored():
    graph = nx.path_graph(5)
    index = PageRankIndex(graph)
    assert_scores_close(index.run({1: 10.0, "not a node": 5.0}), index.run({1: 1.0}), tol=1e-12)


def test_all_zero_personalization_is_an_error_that_says_so():
    index = PageRankIndex(nx.path_graph(3))
    with pytest.raises(ValueError, match="no positive weight"):
        index.run({0: 0.0})
    with pytest.raises(ValueError, match="no positive weight"):
        index.run({"elsewhere": 1.0})
    with pytest.raises(ValueError, match="no positive weight"):
        pagerank_reference(nx.path_graph(3), {})


def test_negative_personalization_is_rejected():
    with pytest.raises(ValueError, match="non-negative"):
        PageRankIndex(nx.path_graph(3)).run({0: 1.0, 1: -0.5})


def test_not_converging_raises_named_error_that_networkx_callers_catch():
    graph = random_graph(1, directed=True)
    with pytest.raises(PageRankNotConverged, match="within 2 iterations"):
        PageRankIndex(graph).run({0: 1.0}, tol=1e-15, max_iter=2)
    with pytest.raises(nx.PowerIterationFailedConvergence):
        pagerank_reference(graph, {0: 1.0}, tol=1e-15, max_iter=2)


def test_run_vector_agrees_with_run_and_checks_its_shape():
    graph = random_graph(2, directed=False)
    index = PageRankIndex(graph)
    p = {0: 1.0, 10: 3.0}
    by_node = index.run(p)
    by_index = index.run_vector(index.vector(p))
    assert by_index.tolist() == [by_node[n] for n in index.nodelist]
    with pytest.raises(ValueError, match="shape"):
        index.run_vector(np.ones(3))


def test_nodelist_fixes_the_index_order():
    graph = nx.path_graph(4)
    index = PageRankIndex(graph, nodelist=[3, 2, 1, 0])
    assert index.index == {3: 0, 2: 1, 1: 2, 0: 3}
    assert_scores_close(index.run({0: 1.0}), nx.pagerank(graph, personalization={0: 1.0}))


def test_transition_matrix_is_kept_as_float64_csr():
    index = PageRankIndex(random_graph(3, directed=True))
    assert index.transition_t.format == "csr"
    assert index.transition_t.dtype == np.float64
    column_sums = np.asarray(index.transition_t.sum(axis=0)).ravel()
    # Each node's outgoing probabilities sum to 1, or 0 for a dangling node.
    assert np.all(np.isclose(column_sums, 1.0) | np.isclose(column_sums, 0.0))


def test_empty_graph_gives_empty_scores():
    assert PageRankIndex(nx.Graph()).run({"a": 1.0}) == {}
    empty = PageRankIndex.from_edges([], np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    assert len(empty) == 0 and empty.run({"a": 1.0}) == {}
    assert pagerank_reference(nx.Graph(), {"a": 1.0}) == {}


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    directed=st.booleans(),
    alpha=st.floats(0.05, 0.95),
    seeds=st.lists(st.integers(0, 29), min_size=1, max_size=4),
)
def test_scores_are_a_distribution_matching_the_reference(seed, directed, alpha, seeds):
    graph = random_graph(seed, directed, n=30, m=50)
    p = {node: 1.0 for node in seeds}
    # A damping near 0.95 needs more than 100 iterations to meet the l1 rule on some graphs.
    scores = PageRankIndex(graph).run(p, alpha=alpha, max_iter=2000)
    assert sum(scores.values()) == pytest.approx(1.0, abs=1e-9)
    assert min(scores.values()) >= 0
    assert_scores_close(scores, pagerank_reference(graph, p, alpha=alpha, max_iter=2000), tol=1e-9)


@pytest.mark.parametrize("directed", [True, False])  # the power iteration, the Chebyshev one
def test_an_index_split_into_row_blocks_walks_as_the_whole_matrix_does(directed):
    # Large graphs split the matrix into row blocks, one per core; here the split is forced
    # (any machine, any size) and the walk and the l1 run must not change.
    from workbench.context_graph.ppr import _row_blocks

    graph = random_graph(7, directed=directed, n=300, m=1200)
    whole, split = PageRankIndex(graph), PageRankIndex(graph)
    assert whole.transition_t.indices.dtype == np.int32  # 32-bit column indices where they fit
    split._blocks = _row_blocks(split.transition_t, 3)
    bounds = [(lo, hi) for lo, hi, _ in split._blocks]
    assert len(bounds) == 3 and bounds[0][0] == 0 and bounds[-1][1] == len(graph)
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))  # every row in one block
    for p in personalizations(graph, 7):
        vector = whole.vector(p)
        assert np.allclose(split.run_vector(vector), whole.run_vector(vector), atol=1e-12)
        (a, iterations_a, done_a), (b, iterations_b, done_b) = whole.walk(vector), split.walk(vector)
        assert np.allclose(a, b, atol=1e-12) and (iterations_a, done_a) == (iterations_b, done_b)
        assert_scores_close(split.run(p), pagerank_reference(graph, p))


def test_a_forked_child_walks_on_row_blocks_with_a_pool_of_its_own():
    # The crash tests fork workers; a pool made before the fork has no threads in the child.
    import os

    from workbench.context_graph.ppr import _row_blocks

    index = PageRankIndex(random_graph(5, directed=False, n=200, m=800))
    index._blocks = _row_blocks(index.transition_t, 2)
    p = index.vector({0: 1.0})
    expected, _, _ = index.walk(p)  # the parent's pool now exists
    pid = os.fork()
    if pid == 0:
        try:
            scores, _, done = index.walk(p)
            os._exit(0 if done and np.allclose(scores, expected, atol=1e-12) else 1)
        except BaseException:
            os._exit(2)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        finished, status = os.waitpid(pid, os.WNOHANG)
        if finished:
            assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    raise AssertionError("the forked child's walk hung on the parent's pool")


def exact_walk(index: PageRankIndex, p: np.ndarray) -> np.ndarray:
    """The fixed point, by the power iteration run to rounding error."""
    p = p / p.sum()
    scores, _, converged = index._power(p, 0.85, p.copy(), 5000, "max", 1e-15)
    assert converged
    return scores


def test_only_an_undirected_graph_gives_a_reversible_walk():
    undirected, directed = random_graph(3, directed=False), random_graph(3, directed=True)
    assert PageRankIndex(undirected).reversible and not PageRankIndex(directed).reversible
    assert PageRankIndex(random_graph(3, directed=False, multi=True)).reversible
    rows, cols = np.array([0, 1]), np.array([1, 2])
    assert PageRankIndex.from_edges("abc", rows, cols).reversible
    assert not PageRankIndex.from_edges("abc", rows, cols, directed=True).reversible
    built = PageRankIndex(undirected)
    kept = PageRankIndex.from_transition(built.nodelist, built.transition_t, built.order, built._dangling)
    assert not kept.reversible  # unless told: a directed walk must never take the Chebyshev iteration
    assert PageRankIndex.from_transition(built.nodelist, built.transition_t, built.order, built._dangling,
                                         reversible=True).reversible


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_reversible_walk_reaches_the_fixed_point_in_fewer_iterations_than_the_power_iteration(seed):
    graph = random_graph(seed, directed=False, n=3000, m=9000)
    graph.add_edge(7, 7, weight=2)  # a self-loop counts once
    chebyshev = PageRankIndex(graph)
    power = PageRankIndex.from_transition(chebyshev.nodelist, chebyshev.transition_t, chebyshev.order,
                                          chebyshev._dangling)
    for p in personalizations(graph, seed):
        vector = chebyshev.vector(p)
        exact = exact_walk(power, vector)
        for tol in (1e-5, 1e-8):
            fast, fast_steps, fast_done = chebyshev.walk(vector, 0.85, tol)
            slow, slow_steps, slow_done = power.walk(vector, 0.85, tol)
            assert fast_done and slow_done
            assert fast.sum() == pytest.approx(1.0, abs=1e-12) and fast.min() >= 0
            assert np.abs(fast - exact).max() < 10 * tol and np.abs(slow - exact).max() < 10 * tol
            if vector[-1] == 0:  # not an isolated node alone, which both settle at once
                assert fast_steps < slow_steps
    reference = pagerank_reference(graph, {3: 1.0, 10: 2.0}, tol=1e-12, max_iter=1000)
    scores, _, _ = chebyshev.walk(chebyshev.vector({3: 1.0, 10: 2.0}), 0.85, 1e-10, 1000)
    assert_scores_close(dict(zip(chebyshev.nodelist, scores.tolist())), reference, tol=1e-8)


@pytest.mark.parametrize("seed", [1, 2])
def test_a_walk_to_a_coarse_tolerance_runs_in_single_precision_and_agrees_with_double(seed):
    from workbench.context_graph.ppr import SINGLE_PRECISION_TOLERANCE, _row_blocks

    graph = random_graph(seed, directed=False, n=3000, m=9000)
    index = PageRankIndex(graph)
    double = index.with_double_precision()
    exact = exact_walk(index.with_power_iteration(), index.vector({3: 1.0}))
    index.walk(index.vector({3: 1.0}), 0.85, SINGLE_PRECISION_TOLERANCE / 10)
    assert index._single_blocks is None  # a finer tolerance walks in float64
    for p in personalizations(graph, seed):
        vector = index.vector(p)
        for tol in (SINGLE_PRECISION_TOLERANCE, 1e-5, 1e-4):
            single, steps, done = index.walk(vector, 0.85, tol)
            precise, precise_steps, precise_done = double.walk(vector, 0.85, tol)
            assert done and precise_done and abs(steps - precise_steps) <= 1
            assert single.dtype == np.float64 and single.sum() == pytest.approx(1.0, abs=1e-12)
            assert np.abs(single - precise).max() < tol  # float32's rounding is far below the tolerance
    made = index._single_blocks  # the coarse walks made the float32 blocks
    assert made is not None and made[0] is index._blocks and all(m.dtype == np.float32 for _, _, m in made[1])
    assert double._single_blocks is None
    single, _, _ = index.walk(index.vector({3: 1.0}), 0.85, 1e-5)
    assert np.abs(single - exact).max() < 1e-4
    index._blocks = _row_blocks(index.transition_t, 3)  # new blocks: the float32 copy follows them
    assert len(index._blocks_of(np.float32)) == 3


def test_a_reversible_walk_of_an_isolated_seed_stays_on_it():
    graph = random_graph(4, directed=False)
    index = PageRankIndex(graph)
    scores, _, converged = index.walk(index.vector({len(graph) - 1: 1.0}))  # an isolated node
    assert converged and scores[-1] == pytest.approx(1.0) and np.count_nonzero(scores) == 1


def test_a_reversible_walk_that_runs_out_of_iterations_keeps_a_distribution():
    index = PageRankIndex(random_graph(5, directed=False, n=500, m=1500))
    scores, iterations, converged = index.walk(index.vector({0: 1.0}), 0.85, 1e-14, 3)
    assert (iterations, converged) == (3, False)
    assert scores.sum() == pytest.approx(1.0) and scores.min() >= 0


def test_an_undamped_walk_is_the_power_iteration_even_when_reversible():
    index = PageRankIndex(random_graph(6, directed=False, n=200, m=600))
    p = index.vector({0: 1.0})
    walked, power = index.walk(p, 1.0, 1e-6, 50), index.with_power_iteration().walk(p, 1.0, 1e-6, 50)
    assert np.array_equal(walked[0], power[0]) and walked[1:] == power[1:]
    assert not np.array_equal(index.walk(p, 0.85)[0], index.with_power_iteration().walk(p, 0.85)[0])
