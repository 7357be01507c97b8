"""The PageRank walk's iterations and precisions on one graph, in one run: the gains as ratios.

graphrag's graph is undirected, so its walk is reversible and takes Chebyshev semi-iteration
in float32 at graphrag's tolerance (:meth:`~workbench.context_graph.ppr.PageRankIndex.walk`).
:func:`bench_walks` times it against the same iteration in float64 and the power iteration
(float64) on the same transition matrix, with the restart vectors of the entities the questions
name, at graphrag's damping and tolerance, and measures each against the fixed point.
Part of ``bench scale``.
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Sequence

import numpy as np

__all__ = ["bench_walks"]


def bench_walks(graph, questions: Sequence[str], alpha: float) -> dict[str, Any]:
    """Per iteration: p50 ms, p50 iterations and the largest error of any score against the fixed
    point (the Chebyshev walk run to 1e-13 in float64), over the questions that name an entity of
    ``graph``, for the power iteration, the Chebyshev one in float64 (``chebyshev_double``) and as
    graphrag runs it (``chebyshev``); the power iteration's p50 over the Chebyshev one's in
    float64, and that over graphrag's."""
    from ..retrieve.graphrag import PPR_MAX_ITERATIONS, PPR_TOLERANCE, Seeds, name_seeds, personalization

    chebyshev = graph.pagerank_index()
    if not chebyshev.reversible:
        return {"not measured": "the walk's graph is not reversible"}
    named_by_question = (name_seeds(graph, question) for question in questions)
    restarts = [personalization(graph, Seeds(named, {}, {}), 1.0) for named in named_by_question if named]
    if not restarts:
        return {"not measured": "no question names an entity of the graph"}
    exact = [chebyshev.walk(p, alpha, 1e-13, 1000)[0] for p in restarts]
    out: dict[str, Any] = {"restarts": len(restarts), "damping": alpha, "tolerance": PPR_TOLERANCE}
    medians: dict[str, float] = {}
    walks = (("power", chebyshev.with_power_iteration()), ("chebyshev_double", chebyshev.with_double_precision()),
             ("chebyshev", chebyshev))
    for name, index in walks:
        index.walk(restarts[0], alpha, PPR_TOLERANCE, PPR_MAX_ITERATIONS)  # warm caches once, like a running app
        seconds, steps, errors = [], [], []
        for p, fixed in zip(restarts, exact):
            started = time.perf_counter()
            scores, iterations, _ = index.walk(p, alpha, PPR_TOLERANCE, PPR_MAX_ITERATIONS)
            seconds.append(time.perf_counter() - started)
            steps.append(iterations)
            errors.append(float(np.abs(scores - fixed).max()))
        medians[name] = statistics.median(seconds)
        out[name] = {"p50_ms": float(f"{1000 * medians[name]:.3g}"),
                     "iterations_p50": statistics.median(steps), "iterations_max": max(steps),
                     "largest_error": float(f"{max(errors):.3g}")}
    out["power_over_chebyshev_p50"] = round(medians["power"] / medians["chebyshev_double"], 2)
    out["double_over_single_p50"] = round(medians["chebyshev_double"] / medians["chebyshev"], 2)
    return out
