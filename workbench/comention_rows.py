"""A chunk's co-mention pairs, kept as one row of the record rather than one row a pair.

Co-mention triples are most of a large record (a 30 MB notebook: 971,816 of its 1.18 M triple
rows, each repeating its chunk id, relation, origin, confidence and both types: 130 MiB with
their index). Their relation (``co_mentioned``), origin (``comention``) and confidence (1) are
the same for all, and a chunk's pairs name the same few entities again and again. So the record
keeps, per chunk, its entities once (surface and type, in the order first paired) and each pair
as two positions in that list (:func:`pack_comentions`); :func:`unpack_comentions` gives the
triples back, the same and in the same order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import orjson

from .model import COMENTION_RELATION, Triple

__all__ = ["COMENTION_ORIGIN", "is_packable", "pack_comentions", "unpack_comentions", "unpack_pairs"]

#: The origin of the triples the entity extractor gives each co-mentioned pair.
COMENTION_ORIGIN = "comention"


def is_packable(triple: Triple) -> bool:
    """Whether ``triple`` is a co-mention pair as the entity extractor makes them (kept packed)."""
    return (triple.relation == COMENTION_RELATION and triple.origin == COMENTION_ORIGIN
            and triple.confidence == 1.0)


def pack_comentions(triples: Iterable[Triple]) -> list[tuple[str, int, str]]:
    """``(chunk id, pairs, body)`` per chunk of the co-mention ``triples`` (each :func:`is_packable`).

    Examples
    --------
    >>> t = [Triple("A", "co_mentioned", "B", "c1", 1.0, "comention", "service", "technology"),
    ...      Triple("A", "co_mentioned", "C", "c1", 1.0, "comention", "service", "person")]
    >>> pack_comentions(t)
    [('c1', 2, '[["A","service","B","technology","C","person"],[0,1,0,2]]')]
    >>> [x.object for x in unpack_comentions("c1", pack_comentions(t)[0][2])]
    ['B', 'C']
    """
    by_chunk: dict[str, tuple[dict[tuple[str, str], int], list[int]]] = {}
    for t in triples:
        entities, pairs = by_chunk.setdefault(t.chunk_id, ({}, []))
        pairs.append(entities.setdefault((t.subject, t.subject_type), len(entities)))
        pairs.append(entities.setdefault((t.object, t.object_type), len(entities)))
    return [(chunk_id, len(pairs) // 2,
             orjson.dumps([[part for entity in entities for part in entity], pairs]).decode())
            for chunk_id, (entities, pairs) in by_chunk.items()]


def unpack_pairs(body: str) -> Iterator[tuple[str, str, str, str]]:
    """``(subject, object, subject type, object type)`` of each pair a packed ``body`` holds, in order.

    Raises
    ------
    ValueError
        The body is not what :func:`pack_comentions` writes.
    """
    try:
        entities, pairs = orjson.loads(body)
        for at in range(0, len(pairs), 2):
            a, b = 2 * pairs[at], 2 * pairs[at + 1]
            yield entities[a], entities[b], entities[a + 1], entities[b + 1]
    except (orjson.JSONDecodeError, TypeError, ValueError, IndexError) as exc:
        raise ValueError(f"a damaged co-mention row ({exc})") from None


def unpack_comentions(chunk_id: str, body: str) -> list[Triple]:
    """The co-mention triples of ``chunk_id`` that :func:`pack_comentions` packed into ``body``."""
    return [Triple(subject, COMENTION_RELATION, obj, chunk_id, 1.0, COMENTION_ORIGIN, subject_type, object_type)
            for subject, obj, subject_type, object_type in unpack_pairs(body)]

