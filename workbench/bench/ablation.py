"""graphrag ablations: the defaults against variants that each change one setting, and the
seed's own GraphRAG (``graphrag-seed``) that every departure is measured from.

Every variant is a set of settings overrides (``section -> field -> value``), so it is the same
code path a user gets with those settings in ``settings.yaml``. Each runs graphrag on every
question of a benchmark set over the same cached workspace; :data:`MODE_VARIANTS` run another
mode with the defaults.

Examples
--------
>>> sorted(ABLATIONS)[:2]
['damping 0.5 (HippoRAG)', 'defaults']
>>> ABLATIONS["without title links"]
{'graph': {'title_link_weight': 0.0}}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from .multihop import BenchSet, ModeScore, score_mode

if TYPE_CHECKING:
    from ..workspace.workspace import Workspace

__all__ = ["ABLATIONS", "MODE_VARIANTS", "run_ablation"]

#: Variant name -> the settings it changes from the defaults.
ABLATIONS: dict[str, dict[str, dict[str, object]]] = {
    "defaults": {},
    "without entities named in the query": {"graphrag": {"entity_seed_share": 0.0}},
    "without entity-name embedding seeds": {"graphrag": {"seed_similarity_threshold": 1.0}},
    "embedding seeds weighted like named ones": {"graphrag": {"similar_seed_weight": 1.0}},
    "without dense passage seeds": {"graphrag": {"dense_seeds": 0}},
    "without title links": {"graph": {"title_link_weight": 0.0}},
    "without synonym edges": {"graph": {"synonym_threshold": 1.0}},
    "damping 0.5 (HippoRAG)": {"graphrag": {"ppr_damping": 0.5}},
    "without chain bridges": {"graphrag": {"bridges_per_start": 0}},
    "without names written in part": {"graphrag": {"partial_names": False}},
    "walk weight 1": {"graphrag": {"graph_weight": 1.0}},
    "title links weighted 2": {"graph": {"title_link_weight": 2.0}},
}

#: Variant name -> the mode it runs with the defaults instead of graphrag.
MODE_VARIANTS: dict[str, str] = {"seed 003 as written (graphrag-seed)": "graphrag-seed"}


def run_ablation(ws: Workspace, bench: BenchSet, variants: Mapping[str, Mapping] | None = None,
                 progress: Callable[[str, int, int], None] | None = None) -> dict[str, ModeScore]:
    """graphrag's Recall@2/@5 on ``bench`` under each variant's settings, then each of
    :data:`MODE_VARIANTS` (when ``variants`` is not given), by variant name."""
    from ..retrieve import retrieve
    from ..workspace.workspace import Workspace

    results: dict[str, ModeScore] = {}
    if variants is None:
        for name, mode in MODE_VARIANTS.items():
            results[name] = score_mode(ws, bench, mode, retrieve, progress, label=name)
    for name, changes in (variants or ABLATIONS).items():
        settings = ws.settings.model_copy(deep=True)
        for section, fields in changes.items():
            for field, value in fields.items():
                setattr(getattr(settings, section), field, value)
        variant = Workspace(ws.path, settings=settings, embedder=ws.embedder)
        try:
            results[name] = score_mode(variant, bench, "graphrag", retrieve, progress, label=name)
        finally:
            variant.close()
    return results
