"""Personalized PageRank: a sparse power iteration kept between queries, and a reference.

:class:`PageRankIndex` builds the row-normalised transition matrix of a graph once and
answers many personalization queries against it; each iteration is one sparse
matrix-vector product. :func:`pagerank_reference` is a plain dict-based version of the same
algorithm, kept to test the fast one against. Both follow
``networkx.pagerank(G, alpha, personalization, weight=weight, dangling=None)`` exactly:
undirected edges count both ways, parallel edges add their weights, dangling nodes hand
their mass out by the personalization vector, and iteration stops when the l1 change is
below ``N * tol``.

Examples
--------
>>> import networkx as nx
>>> index = PageRankIndex(nx.path_graph(3))
>>> scores = index.run({0: 1.0})
>>> round(sum(scores.values()), 6)
1.0
>>> scores[1] > scores[2]
True
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from functools import partial
from typing import Any

import networkx as nx
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee

from ..runtime.threads import thread_map, usable_cores
from ..settings import setting_default

__all__ = ["PageRankIndex", "PageRankNotConverged", "pagerank_reference", "MIN_BLOCK_ENTRIES",
           "SINGLE_PRECISION_TOLERANCE"]

#: Fewest stored entries of the transition matrix per row block, each block's product on a core
#: of its own (scipy's product releases the GIL). A thread's hand-off costs tens of microseconds
#: an iteration, so small graphs keep one block.
MIN_BLOCK_ENTRIES = 250_000

#: The finest tolerance a Chebyshev walk reaches in single precision. The product reads the
#: matrix's values and the scores, so float32 halves what an iteration moves through memory; its
#: rounding, about 6e-8 of a score, is 16 times below this. A finer tolerance walks in float64.
SINGLE_PRECISION_TOLERANCE = 1e-6


#: What a row costs a product beside its stored entries, counted in entries (its pointer, its
#: output): a block of many short rows costs more than its entries alone say.
ROW_COST_IN_ENTRIES = 3


def _row_blocks(matrix: sp.csr_array, parts: int) -> list[tuple[int, int, sp.csr_array]]:
    """``(first row, end row, rows)`` blocks of a CSR matrix of about equal product cost (its
    entries and, :data:`ROW_COST_IN_ENTRIES` each, its rows)."""
    n = matrix.shape[0]
    cost = matrix.indptr + ROW_COST_IN_ENTRIES * np.arange(n + 1, dtype=np.int64)
    cuts = np.searchsorted(cost, np.linspace(0, cost[-1], parts + 1)[1:-1])
    bounds = sorted({0, n, *(int(c) for c in cuts)})
    return [(lo, hi, matrix[lo:hi]) for lo, hi in zip(bounds, bounds[1:]) if hi > lo]


class PageRankNotConverged(nx.PowerIterationFailedConvergence):
    """The power iteration did not reach the tolerance within ``max_iter`` iterations.

    A subclass of :class:`networkx.PowerIterationFailedConvergence`, so code written
    against networkx catches it too.
    """

    def __init__(self, num_iterations: int, tol: float) -> None:
        Exception.__init__(
            self,
            f"PageRank did not converge to tol={tol} within {num_iterations} iterations; "
            "raise max_iter or loosen tol",
        )
        self.num_iterations = num_iterations
        self.tol = tol


def _distribution(scores: np.ndarray) -> np.ndarray:
    """Scores clipped at 0 and scaled to sum 1, in place. A Chebyshev iterate extrapolates past the
    last one and may dip below 0 where the fixed point is near 0; clipping only moves such a score
    nearer its true value."""
    np.maximum(scores, 0.0, out=scores)
    scores /= scores.sum()
    return scores


def _check_parameters(alpha: float, tol: float, max_iter: int) -> None:
    if not 0 <= alpha <= 1:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    if tol <= 0:
        raise ValueError(f"tol must be positive, got {tol}")
    if max_iter < 1:
        raise ValueError(f"max_iter must be at least 1, got {max_iter}")


def _empty_personalization() -> ValueError:
    return ValueError(
        "personalization gives no positive weight to any node of the graph; "
        "pass at least one node of the graph with a positive value"
    )


class PageRankIndex:
    """A graph's transition matrix, built once, for many Personalized PageRank queries.

    Parameters
    ----------
    graph : networkx.Graph or networkx.DiGraph
        Undirected graphs count each edge both ways; multigraphs add parallel edges' weights.
    weight : str or None, default "weight"
        Edge attribute holding the weight (missing means 1); ``None`` weighs every edge 1.
    nodelist : iterable, optional
        Node order of the index space; defaults to ``list(graph)``.

    Attributes
    ----------
    nodelist : list
        The node at each index.
    index : mapping
        Node -> its index (a dict, or the mapping :meth:`from_transition` was given).
    transition_t : scipy.sparse.csr_array
        Transpose of the row-stochastic transition matrix, so one step is ``transition_t @ x``.
    reversible : bool
        Whether the walk is reversible (the graph undirected, its weights the same both ways), which
        lets :meth:`walk` take the faster Chebyshev iteration.

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "a")])
    >>> index = PageRankIndex(G)
    >>> scores = index.run({"a": 1.0})
    >>> max(scores, key=scores.get)
    'a'
    >>> index.run_vector(np.array([1.0, 0.0, 0.0])).round(3).tolist()
    [0.389, 0.33, 0.281]
    """

    index: Mapping[Hashable, int]
    #: The finest tolerance :meth:`walk` reaches in float32 (:data:`SINGLE_PRECISION_TOLERANCE`;
    #: infinite in :meth:`with_double_precision`).
    single_precision_tolerance: float = SINGLE_PRECISION_TOLERANCE
    #: ``(the row blocks, their float32 copy)``, made by :meth:`_blocks_of` at the first
    #: single-precision walk; made again when the blocks are not those it was made from.
    _single_blocks: tuple[list, list[tuple[int, int, sp.csr_array]]] | None = None

    def __init__(
        self,
        graph: nx.Graph | nx.DiGraph,
        weight: str | None = "weight",
        nodelist: Iterable[Hashable] | None = None,
    ) -> None:
        self.nodelist = list(graph) if nodelist is None else list(nodelist)
        self.index = {node: i for i, node in enumerate(self.nodelist)}
        if len(self.index) != len(self.nodelist):
            raise ValueError("nodelist contains a node more than once")
        n = len(self.nodelist)
        if n == 0:
            self.transition_t = sp.csr_array((0, 0), dtype=np.float64)
            self.reversible = False
            self._dangling = np.zeros(0, dtype=np.int64)
            self.order = self._position = np.zeros(0, dtype=np.int64)
            self._blocks: list[tuple[int, int, sp.csr_array]] = []
            return
        self._set_transition([nx.to_scipy_sparse_array(
            graph, nodelist=self.nodelist, weight=weight, dtype=np.float64, format="csr"
        )], reversible=not graph.is_directed())

    def _set_transition(self, handed: list, reversible: bool) -> None:
        """The row-stochastic transition matrix of a weighted adjacency matrix, kept transposed
        and in a bandwidth-reducing node order (reverse Cuthill-McKee), so that one iteration
        reads the score vector in nearly sequential runs (fewer cache misses on a large
        graph). Personalizations and scores are permuted in and out at the edges of a run.
        ``handed`` is a one-item list holding the adjacency matrix, taken out of it so that nothing
        keeps the matrix once the transition is made."""
        adjacency = handed.pop()  # the caller keeps no reference: it is freed below
        n = adjacency.shape[0]
        self.reversible = reversible
        out_weight = np.asarray(adjacency.sum(axis=1), dtype=np.float64).ravel()
        inverse = np.zeros(n)
        np.divide(1.0, out_weight, out=inverse, where=out_weight != 0)
        transition = sp.diags_array(inverse, format="csr") @ adjacency
        del adjacency
        pattern = sp.csr_matrix(transition + transition.T)
        #: ``order[i]``: the node (position in :attr:`nodelist`) at internal position ``i``.
        self.order = np.asarray(reverse_cuthill_mckee(pattern, symmetric_mode=True) if n else [], dtype=np.int64)
        del pattern  # each matrix let go as soon as the next is made, which lowers the peak
        self._position = np.empty(n, dtype=np.int64)
        self._position[self.order] = np.arange(n)
        # Stored transposed so each iteration is one CSR matvec, the fast direction, with 32-bit
        # column indices where they fit (a fifth less to read per iteration than 64-bit ones).
        transposed = sp.csr_array(transition.T)
        del transition
        ordered = sp.csr_array(transposed[self.order][:, self.order], dtype=np.float64)
        del transposed
        ordered.sort_indices()
        index_type = np.int32 if max(n, ordered.nnz) < np.iinfo(np.int32).max else np.int64
        self.transition_t = sp.csr_array((ordered.data, ordered.indices.astype(index_type),
                                          ordered.indptr.astype(index_type)), shape=ordered.shape)
        self._blocks = _row_blocks(self.transition_t, max(1, min(usable_cores(), self.transition_t.nnz // MIN_BLOCK_ENTRIES)))
        # The mass on dangling nodes is summed over their positions: a float-mask dot product
        # goes through BLAS threads, which on a loaded machine cost milliseconds per iteration.
        self._dangling = self._position[np.flatnonzero(out_weight == 0)]

    @classmethod
    def from_edges(cls, nodelist: Iterable[Hashable], rows: np.ndarray, cols: np.ndarray,
                   weights: np.ndarray | None = None, directed: bool = False) -> PageRankIndex:
        """An index of a weighted graph given as edge arrays of node positions (CSR, no networkx).

        Each ``(rows[i], cols[i], weights[i])`` is an edge (missing weights are 1); repeated pairs
        add up. Undirected (the default), each edge counts both ways and a self-loop once. Builds
        the matrix with scipy alone, which is what a graph of a million edges needs.

        >>> index = PageRankIndex.from_edges(["a", "b", "c"], np.array([0, 1]), np.array([1, 2]), np.array([1.0, 1.0]))
        >>> round(index.run({"a": 1.0})["b"], 3)
        0.459
        >>> directed = PageRankIndex.from_edges(["a", "b"], np.array([0]), np.array([1]), directed=True)
        >>> directed.run({"a": 1.0})["b"] > directed.run({"b": 1.0})["a"]
        True
        """
        self = cls.__new__(cls)
        self.nodelist = list(nodelist)
        self.index = {node: i for i, node in enumerate(self.nodelist)}
        if len(self.index) != len(self.nodelist):
            raise ValueError("nodelist contains a node more than once")
        n = len(self.nodelist)
        rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
        weights = np.ones(len(rows)) if weights is None else np.asarray(weights, dtype=np.float64)
        if not directed:
            loops = rows == cols
            rows, cols = np.concatenate([rows, cols[~loops]]), np.concatenate([cols, rows[~loops]])
            weights = np.concatenate([weights, weights[~loops]])
        adjacency = sp.csr_array((weights, (rows, cols)), shape=(n, n))
        adjacency.sum_duplicates()
        handed = [adjacency]
        del rows, cols, weights, adjacency
        self._set_transition(handed, reversible=not directed)  # handed over: freed inside once the transition is made
        return self

    @classmethod
    def from_transition(cls, nodelist: Iterable[Hashable], transition_t: sp.csr_array, order: np.ndarray,
                        dangling: np.ndarray, positions: Mapping[Hashable, int] | None = None,
                        reversible: bool = False) -> PageRankIndex:
        """The index whose :attr:`transition_t`, :attr:`order` and dangling positions these are
        (as another index kept them): nothing is normalised or reordered again. ``positions``
        (node -> its position in ``nodelist``), when the caller holds it already, is used as
        :attr:`index` instead of a dict made here.

        >>> built = PageRankIndex.from_edges(["a", "b", "c"], np.array([0, 1]), np.array([1, 2]))
        >>> again = PageRankIndex.from_transition(built.nodelist, built.transition_t, built.order, built._dangling)
        >>> again.run({"a": 1.0}) == built.run({"a": 1.0})
        True
        """
        self = cls.__new__(cls)
        self.nodelist = list(nodelist)
        self.index = {node: i for i, node in enumerate(self.nodelist)} if positions is None else positions
        n = len(self.nodelist)
        if len(self.index) != n or transition_t.shape != (n, n) or len(order) != n:
            raise ValueError(f"a transition matrix of shape {transition_t.shape} and an order of {len(order)} "
                             f"do not fit {n} distinct nodes")
        self.transition_t = transition_t
        self.reversible = reversible
        self.order = np.asarray(order, dtype=np.int64)
        self._position = np.empty(n, dtype=np.int64)
        self._position[self.order] = np.arange(n)
        self._dangling = np.asarray(dangling, dtype=np.int64)
        self._blocks = _row_blocks(transition_t, max(1, min(usable_cores(), transition_t.nnz // MIN_BLOCK_ENTRIES))) \
            if n else []
        return self

    def with_power_iteration(self) -> PageRankIndex:
        """This index's matrix and nodes, walked by the power iteration even when reversible (to
        compare the two iterations on one graph).

        >>> import networkx as nx
        >>> index = PageRankIndex(nx.path_graph(4))
        >>> power = index.with_power_iteration()
        >>> index.reversible, power.reversible, power.transition_t is index.transition_t
        (True, False, True)
        """
        return PageRankIndex.from_transition(self.nodelist, self.transition_t, self.order, self._dangling,
                                             positions=self.index, reversible=False)

    def with_double_precision(self) -> PageRankIndex:
        """This index's matrix and nodes, walked in float64 at every tolerance (to measure what
        single precision gains on one graph).

        >>> import networkx as nx
        >>> index = PageRankIndex(nx.path_graph(4))
        >>> p = np.array([1.0, 0, 0, 0])
        >>> single, double = index.walk(p, 0.85, 1e-5)[0], index.with_double_precision().walk(p, 0.85, 1e-5)[0]
        >>> bool(np.abs(single - double).max() < 1e-6), single.dtype
        (True, dtype('float64'))
        """
        double = PageRankIndex.from_transition(self.nodelist, self.transition_t, self.order, self._dangling,
                                               positions=self.index, reversible=self.reversible)
        double.single_precision_tolerance = math.inf
        return double

    def __len__(self) -> int:
        return len(self.nodelist)

    def vector(self, personalization: Mapping[Any, float]) -> np.ndarray:
        """The personalization mapping as a vector in index space; unknown nodes are dropped."""
        p = np.zeros(len(self.nodelist))
        for node, value in personalization.items():
            i = self.index.get(node)
            if i is not None:
                p[i] = value
        return p

    def run(
        self,
        personalization: Mapping[Any, float],
        alpha: float = setting_default("graphrag.ppr_damping"),
        tol: float = 1e-6,
        max_iter: int = 100,
    ) -> dict[Hashable, float]:
        """Personalized PageRank for one personalization mapping.

        Parameters
        ----------
        personalization : mapping
            Node -> non-negative weight; normalised to sum 1. Nodes not in the graph are
            ignored and nodes left out get 0.
        alpha : float, default ``settings.graphrag.ppr_damping``
            Damping factor: the probability of following an edge rather than restarting.
        tol : float, default 1e-6
            Stop when the l1 change of one iteration is below ``N * tol``.
        max_iter : int, default 100
            Most iterations before :class:`PageRankNotConverged`.

        Returns
        -------
        dict
            Node -> score, summing to 1.

        Raises
        ------
        ValueError
            If no node of the graph gets a positive weight, or a weight is negative.
        PageRankNotConverged
            If the iteration does not converge within ``max_iter`` iterations.
        """
        if not self.nodelist:
            return {}
        scores = self.run_vector(self.vector(personalization), alpha, tol, max_iter)
        return dict(zip(self.nodelist, scores.tolist()))

    def run_vector(
        self, p: np.ndarray, alpha: float = setting_default("graphrag.ppr_damping"), tol: float = 1e-6,
        max_iter: int = 100,
    ) -> np.ndarray:
        """Personalized PageRank in index space: the query hot path.

        Parameters
        ----------
        p : numpy.ndarray
            Personalization weights in :attr:`nodelist` order, non-negative; normalised here.
        alpha, tol, max_iter
            As in :meth:`run`.

        Returns
        -------
        numpy.ndarray
            Scores in :attr:`nodelist` order, summing to 1.
        """
        _check_parameters(alpha, tol, max_iter)
        n = len(self.nodelist)
        if n == 0:
            return np.zeros(0)
        p = self._normalised(p)
        x, _, converged = self._power(p, alpha, np.full(n, 1.0 / n), max_iter, "l1", n * tol)
        if converged:
            return x
        raise PageRankNotConverged(max_iter, tol)


    def _normalised(self, p: np.ndarray) -> np.ndarray:
        """``p`` as a float vector of the index's length summing to 1; ``ValueError`` if it cannot be."""
        n = len(self.nodelist)
        p = np.asarray(p, dtype=np.float64)
        if p.shape != (n,):
            raise ValueError(f"personalization vector has shape {p.shape}, expected ({n},)")
        if (p < 0).any():
            raise ValueError("personalization weights must be non-negative")
        total = p.sum()
        if not total > 0:
            raise _empty_personalization()
        return p / total

    def walk(self, p: np.ndarray, alpha: float = setting_default("graphrag.ppr_damping"), tol: float = 1e-6,
             max_iter: int = 100) -> tuple[np.ndarray, int, bool]:
        """Personalized PageRank that stops when one more plain iteration would move no score by
        ``tol`` or more, or after ``max_iter`` iterations, and keeps the scores either way.

        Returns ``(scores, iterations, converged)``. The largest-change rule does not loosen
        as the graph grows, unlike the l1 rule of :meth:`run_vector`. A :attr:`reversible` index
        walks by Chebyshev semi-iteration (one matrix product an iteration, as the power
        iteration), in fewer iterations than the power iteration and nearer the fixed point
        (``bench scale`` measures both).

        >>> import networkx as nx
        >>> scores, iterations, converged = PageRankIndex(nx.path_graph(3)).walk(np.array([1.0, 0, 0]))
        >>> converged, round(float(scores.sum()), 6)
        (True, 1.0)
        """
        _check_parameters(alpha, tol, max_iter)
        p = self._normalised(p)
        if self.reversible and alpha < 1:  # undamped, the recurrence need not converge
            return self._chebyshev(p, alpha, max_iter, tol)
        return self._power(p, alpha, p.copy(), max_iter, "max", tol)

    def _seeded_blocks(self, seeds: np.ndarray, weights: np.ndarray, dtype: type = np.float64) -> list[tuple]:
        """Each row block, its values in ``dtype``, with the internal positions (within the block)
        and ``weights`` of the restart's nonzeros, at positions ``seeds`` of :attr:`nodelist`: a
        walk adds them each step."""
        seed_at = self._position[seeds]
        seed_weight: np.ndarray = np.asarray(weights, dtype=dtype)
        blocks = []
        for lo, hi, matrix in self._blocks_of(dtype):
            inside = (seed_at >= lo) & (seed_at < hi)
            blocks.append((lo, hi, matrix, seed_at[inside] - lo, seed_weight[inside]))
        return blocks

    def _blocks_of(self, dtype: type) -> list[tuple[int, int, sp.csr_array]]:
        """The row blocks with their values in ``dtype``; a float32 copy is made at the first
        single-precision walk (its values and indices) and kept while
        the blocks stand."""
        if dtype == np.float64:
            return self._blocks
        made = self._single_blocks
        if made is None or made[0] is not self._blocks:
            made = (self._blocks, [(lo, hi, matrix.astype(dtype)) for lo, hi, matrix in self._blocks])
            self._single_blocks = made
        return made[1]

    def _chebyshev(self, p: np.ndarray, alpha: float, max_iter: int, tol: float) -> tuple[np.ndarray, int, bool]:
        """Personalized PageRank of a reversible walk by Chebyshev semi-iteration.

        Solves ``z = alpha M z + (1 - alpha) p``, where ``M`` leaves out the dangling nodes' restart;
        the scores are ``z`` over its sum (the restart from dangling nodes only rescales ``z``). A
        reversible ``M`` is similar to a symmetric matrix, so its eigenvalues are real and within
        [-1, 1]: the Chebyshev recurrence for that interval contracts the error by about
        ``alpha / (1 + sqrt(1 - alpha**2))`` an iteration (0.56 at 0.85) where the power iteration
        contracts it by ``alpha``. Each iteration also takes the plain step ``y = alpha M x +
        (1 - alpha) p`` from the iterate ``x``; it stops, returning ``y`` as a distribution, when that
        step moves no score nor the total by ``tol`` or more (relative to the total), the rule
        :meth:`walk` states. Checking the total matters: the max rule alone let a spread-out change
        of mass through, leaving a seed's score off by more than the tolerance on a large graph.
        At a tolerance of :attr:`single_precision_tolerance` or coarser the iterates and the matrix
        are float32 (the sums stay float64); the scores come back in float64."""
        dtype = np.float32 if tol >= self.single_precision_tolerance else np.float64
        seeds = np.flatnonzero(p)
        x = np.zeros(len(p), dtype=dtype)  # the start, as the power iteration's: p, in the internal order
        x[self._position[seeds]] = p[seeds]
        x_last, y, scratch = np.zeros_like(x), np.empty_like(x), np.empty_like(x)  # x_last: finite, times 0 at first
        blocks = self._seeded_blocks(seeds, (1.0 - alpha) * p[seeds], dtype)
        damping = dtype(alpha)

        def step(block, x: np.ndarray, x_last: np.ndarray, omega: float) -> tuple[float, float, float]:
            """The plain step into ``y``, and ``x_last`` overwritten by the next iterate."""
            lo, hi, matrix, at, restart = block
            out, change, before = y[lo:hi], scratch[lo:hi], x_last[lo:hi]
            np.multiply(matrix @ x, damping, out=out)
            out[at] += restart
            np.subtract(out, x[lo:hi], out=change)
            moved = float(change.sum(dtype=np.float64))
            np.abs(change, out=change)
            before -= out  # before <- omega * out + (1 - omega) * before, with no temporary
            before *= dtype(1.0 - omega)
            before += out
            return float(np.max(change, initial=0.0)), moved, float(out.sum(dtype=np.float64))

        omega = 1.0
        for iteration in range(1, max_iter + 1):
            parts = thread_map(partial(step, x=x, x_last=x_last, omega=omega), blocks)
            total = sum(part[2] for part in parts)
            change = max(max(part[0] for part in parts), abs(sum(part[1] for part in parts)))
            if change < tol * total:
                return _distribution(y[self._position].astype(np.float64, copy=False)), iteration, True
            x, x_last = x_last, x
            omega = 2.0 / (2.0 - alpha * alpha) if iteration == 1 else 1.0 / (1.0 - alpha * alpha * omega / 4.0)
        return _distribution(y[self._position].astype(np.float64, copy=False)), max_iter, False

    def _power(self, p: np.ndarray, alpha: float, start: np.ndarray, max_iter: int, rule: str,
               threshold: float) -> tuple[np.ndarray, int, bool]:
        """The power iteration ``x <- alpha (M x + dangling mass p) + (1 - alpha) p`` from ``start``,
        until the ``rule`` (``"l1"``: summed, ``"max"``: largest) of ``|x - x_last|`` is below
        ``threshold``; in and out of the internal order. ``p`` restarts on a few seeds, so it is
        added over its nonzeros only. Each row block computes its share of one iteration (the
        product, the damping, the restart, its part of the change) on a core of its own."""
        x = start[self.order]
        y = np.empty_like(x)
        seeds = np.flatnonzero(p)
        blocks = self._seeded_blocks(seeds, p[seeds])
        measure = np.sum if rule == "l1" else np.max

        def step(block, x_last: np.ndarray, x_next: np.ndarray, restart: float) -> float:
            lo, hi, matrix, at, mass = block
            out = x_next[lo:hi]
            np.multiply(matrix @ x_last, alpha, out=out)
            out[at] += restart * mass
            return float(measure(np.abs(out - x_last[lo:hi])))

        for iteration in range(1, max_iter + 1):
            restart = alpha * x[self._dangling].sum() + 1.0 - alpha
            changes = thread_map(partial(step, x_last=x, x_next=y, restart=restart), blocks)
            x, y = y, x
            if (sum(changes) if rule == "l1" else max(changes)) < threshold:
                return x[self._position], iteration, True
        return x[self._position], max_iter, False


def pagerank_reference(
    graph: nx.Graph | nx.DiGraph,
    personalization: Mapping[Any, float],
    alpha: float = setting_default("graphrag.ppr_damping"),
    tol: float = 1e-6,
    max_iter: int = 100,
    weight: str | None = "weight",
) -> dict[Hashable, float]:
    """Personalized PageRank with plain dicts: slow and readable, to test the fast one.

    Same parameters and semantics as :meth:`PageRankIndex.run`.

    Examples
    --------
    >>> import networkx as nx
    >>> scores = pagerank_reference(nx.path_graph(3), {0: 1.0})
    >>> round(sum(scores.values()), 6)
    1.0
    """
    _check_parameters(alpha, tol, max_iter)
    nodes = list(graph)
    if not nodes:
        return {}
    # Out-weights per node; an undirected edge counts both ways, a self-loop once.
    out: dict[Hashable, dict[Hashable, float]] = {node: {} for node in nodes}
    for u, v, w in graph.edges(data=weight, default=1):
        w = 1.0 if weight is None else float(w)
        out[u][v] = out[u].get(v, 0.0) + w
        if not graph.is_directed() and u != v:
            out[v][u] = out[v].get(u, 0.0) + w
    out_total = {node: sum(targets.values()) for node, targets in out.items()}
    dangling = [node for node in nodes if out_total[node] == 0]

    if any(value < 0 for node, value in personalization.items() if node in out):
        raise ValueError("personalization weights must be non-negative")
    total = sum(value for node, value in personalization.items() if node in out)
    if not total > 0:
        raise _empty_personalization()
    p = {node: personalization.get(node, 0.0) / total for node in nodes}

    x = dict.fromkeys(nodes, 1.0 / len(nodes))
    for _ in range(max_iter):
        x_last = x
        dangling_mass = sum(x_last[node] for node in dangling)
        x = {node: dangling_mass * p[node] for node in nodes}
        for u, targets in out.items():
            if out_total[u]:
                for v, w in targets.items():
                    x[v] += x_last[u] * w / out_total[u]
        x = {node: alpha * x[node] + (1.0 - alpha) * p[node] for node in nodes}
        if sum(abs(x[node] - x_last[node]) for node in nodes) < len(nodes) * tol:
            return x
    raise PageRankNotConverged(max_iter, tol)
