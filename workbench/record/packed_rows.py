"""A chunk's mentions and co-mention pairs, each kept as one row of the record rather than a row
apiece.

They are most of a large record: millions of mentions and co-mention pairs. A row apiece
repeats its chunk id (in the row and in the index that finds a chunk's rows) and, for a pair,
its relation (``co_mentioned``), origin (``comention``), confidence (1) and both types.
Packed, a chunk's mentions are one row (their types once, each mention as surface, type position
and offset), and its pairs one row (their entities once, each pair as two positions in that
list). Unpacking gives the same mentions and triples in the same order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import orjson

from ..model import COMENTION_ORIGIN, COMENTION_RELATION, Mention, Triple

__all__ = ["is_packable", "pack_comentions", "pack_mentions", "unpack_comentions",
           "unpack_mention_fields", "unpack_mentions", "unpack_pairs"]


def is_packable(triple: Triple) -> bool:
    """Whether ``triple`` is a co-mention pair as the entity extractor makes them (kept packed)."""
    return (triple.relation == COMENTION_RELATION and triple.origin == COMENTION_ORIGIN
            and triple.confidence == 1.0)


def _damaged(what: str, chunk_id: str, exc: Exception) -> ValueError:
    return ValueError(f"a damaged {what} row of chunk {chunk_id!r} ({type(exc).__name__}: {exc}); "
                      "remove its document and ingest it again")


def pack_mentions(mentions: Iterable[Mention]) -> list[tuple[str, int, str]]:
    """``(chunk id, mentions, body)`` per chunk of ``mentions``, chunks in order of first mention.

    Examples
    --------
    >>> m = [Mention("Redis", "c1", "technology", 4), Mention("Auth Service", "c1", "service", 20)]
    >>> pack_mentions(m)
    [('c1', 2, '[["technology","service"],["Redis",0,4,"Auth Service",1,20]]')]
    >>> unpack_mentions("c1", pack_mentions(m)[0][2]) == m
    True
    """
    by_chunk: dict[str, tuple[dict[str, int], list]] = {}
    for m in mentions:
        types, fields = by_chunk.setdefault(m.chunk_id, ({}, []))
        fields.extend((m.surface, types.setdefault(m.entity_type, len(types)), m.start))
    return [(chunk_id, len(fields) // 3, orjson.dumps([list(types), fields]).decode())
            for chunk_id, (types, fields) in by_chunk.items()]


def unpack_mention_fields(body: str, chunk_id: str = "") -> Iterator[tuple[str, str, int]]:
    """``(surface, type, offset)`` of each mention a packed ``body`` holds, in order.

    Raises
    ------
    ValueError
        The body is not what :func:`pack_mentions` writes.
    """
    try:
        types, fields = orjson.loads(body)
        for at in range(0, len(fields), 3):
            surface, kind, start = fields[at:at + 3]
            if not (isinstance(surface, str) and isinstance(start, int) and 0 <= kind < len(types)):
                raise ValueError(f"mention {at // 3} is not (surface, type, offset)")
            yield surface, types[kind], start
    except (orjson.JSONDecodeError, TypeError, ValueError) as exc:
        raise _damaged("mention", chunk_id, exc) from None


def unpack_mentions(chunk_id: str, body: str) -> list[Mention]:
    """The mentions of ``chunk_id`` that :func:`pack_mentions` packed into ``body``."""
    return [Mention(surface, chunk_id, kind, start) for surface, kind, start in unpack_mention_fields(body, chunk_id)]


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


def unpack_pairs(body: str, chunk_id: str = "") -> Iterator[tuple[str, str, str, str]]:
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
            if not 0 <= min(a, b) <= max(a, b) < len(entities) - 1:
                raise ValueError(f"pair {at // 2} names no entity")
            yield entities[a], entities[b], entities[a + 1], entities[b + 1]
    except (orjson.JSONDecodeError, TypeError, ValueError, IndexError) as exc:
        raise _damaged("co-mention", chunk_id, exc) from None


def unpack_comentions(chunk_id: str, body: str) -> list[Triple]:
    """The co-mention triples of ``chunk_id`` that :func:`pack_comentions` packed into ``body``."""
    return [Triple(subject, COMENTION_RELATION, obj, chunk_id, 1.0, COMENTION_ORIGIN, subject_type, object_type)
            for subject, obj, subject_type, object_type in unpack_pairs(body, chunk_id)]
