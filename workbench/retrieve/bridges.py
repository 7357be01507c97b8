"""The second hop of a chain: from the passages a question starts at, to the passages they name.

A two-hop question ("Where was the composer of song X born?") is answered by the passage about
X and the passage X's names lead to (its composer's). The first is found by the names the
question writes; the second is rarely similar to the question as a whole, whose words are mostly
X's. It is *linked* from the first (the first names its title: the passage layer's title links),
and it answers the words the question asks *beside* its names ("where was the composer ... born"):

1. **Starts.** Among the fused ranking's first ``starts`` passages, those titled by a name the
   question writes; when none is, the first passage alone.
2. **Bridges.** Each start's title-linked passages, ranked by their similarity to the question
   with its names taken out (:func:`asked_beside_names`); the best ``per_start`` of each.
3. **Order.** The starts, then the bridges (each start's best first, then each start's second),
   then the rest of the ranking.

Examples
--------
>>> links = {"x": ("carroll", "novel"), "y": ("maté",)}
>>> similarity = {"carroll": 0.6, "novel": 0.2, "maté": 0.5}
>>> chain_order(["x", "film", "y"], links, similarity, starts=["x", "y"], per_start=1)
[('x', None), ('y', None), ('carroll', 'x'), ('maté', 'y'), ('film', None)]
>>> asked_beside_names("Where was the composer of song Mmm Papi born?", [(31, 39)])
'Where was the composer of song born?'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

__all__ = ["asked_beside_names", "chain_order", "chain_starts"]


def asked_beside_names(question: str, spans: Sequence[tuple[int, int]]) -> str:
    """``question`` without the characters of ``spans`` (the names it writes), spaces tidied."""
    kept, at = [], 0
    for start, end in sorted(spans):
        if start >= at:
            kept.append(question[at:start])
            at = end
    kept.append(question[at:])
    text = re.sub(r"\s+", " ", "".join(kept))
    return re.sub(r"\s+([?.,!;:])", r"\1", text).strip()


def chain_starts(ranked: Sequence[str], titled_by_names: frozenset[str] | set[str], starts: int) -> list[str]:
    """The passages a chain starts at: those of the first ``starts`` titled by a name the question
    writes, in ranking order; else the first passage alone.

    >>> chain_starts(["a", "b", "c"], {"c", "b"}, 2), chain_starts(["a", "b"], set(), 2)
    (['b'], ['a'])
    """
    head = list(ranked[:starts])
    return [cid for cid in head if cid in titled_by_names] or head[:1]


def chain_order(ranked: Sequence[str], links_from: Mapping[str, Sequence[str]], similarity: Mapping[str, float],
                starts: Sequence[str], per_start: int) -> list[tuple[str, str | None]]:
    """``(chunk, the start it bridges from or None)``: the starts, their bridges, then the rest of ``ranked``.

    A start's bridges are its linked passages by ``similarity`` (higher first, then by id), those
    already placed left out; a linked passage without a similarity is not a bridge.
    """
    placed = dict.fromkeys(starts)
    choices = []
    for start in starts:
        linked = sorted({cid for cid in links_from.get(start, ()) if cid in similarity and cid not in placed},
                        key=lambda cid: (-similarity[cid], cid))
        choices.append(linked)
    bridges: dict[str, str] = {}
    for _ in range(per_start):  # each start's best, then each start's second...
        for start, linked in zip(starts, choices):
            fresh = [cid for cid in linked if cid not in bridges]
            if fresh:
                bridges[fresh[0]] = start
    order: list[tuple[str, str | None]] = [(cid, None) for cid in placed]
    order += [(cid, start) for cid, start in bridges.items()]
    taken = set(placed) | set(bridges)
    order += [(cid, None) for cid in ranked if cid not in taken]
    return order
