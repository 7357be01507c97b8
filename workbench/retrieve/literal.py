"""A small boost for chunks that contain the query's identifiers literally.

Embeddings blur identifiers: ``ECONNREFUSED``, ``token_cache_ttl`` or ``auth/session.py`` look
like noise to a sentence model, yet a chunk that contains one exactly is what the person asked
for. An identifier is a query word that is all capitals (4+ letters), holds an underscore, a
slash or an inner dot, mixes letters and digits, or is written in camelCase.

Examples
--------
>>> identifiers("Why do we get ECONNREFUSED from redis_client.connect() in auth/session.py?")
['ECONNREFUSED', 'redis_client.connect', 'auth/session.py']
>>> identifiers("If Redis goes down, what breaks?")
[]
>>> from workbench.model import Why
>>> boosted = boost_literal([("a", 0.5, Why()), ("b", 0.52, Why())], {"a": "got ECONNREFUSED", "b": "no"},
...                         ["ECONNREFUSED"], 0.05)
>>> [(chunk_id, score, why.to_json()) for chunk_id, score, why in boosted]
[('a', 0.55, {'literal_match': ['ECONNREFUSED'], 'literal_boost': 0.05}), ('b', 0.52, {})]
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from .base import Ranked, sort_ranked

__all__ = ["identifiers", "boost_literal"]

_TOKEN = re.compile(r"[A-Za-z0-9_][\w./:-]*[A-Za-z0-9_]")
_CAPS = re.compile(r"^[A-Z][A-Z0-9_]{3,}$")
_CAMEL = re.compile(r"^[a-z]+[A-Z]\w*$|^[A-Z][a-z0-9]+[A-Z]\w*$")
_MIXED = re.compile(r"^(?=.*[A-Za-z])(?=.*\d)\w+$")


def identifiers(query: str) -> list[str]:
    """The words of ``query`` written like identifiers, in order, each once."""
    found = []
    for token in _TOKEN.findall(query):
        token = token.rstrip(".:-")
        if (_CAPS.match(token) or "_" in token or "/" in token or re.search(r"\w\.\w", token)
                or _CAMEL.match(token) or _MIXED.match(token)):
            found.append(token)
    return list(dict.fromkeys(found))


def boost_literal(ranked: Sequence[Ranked], texts: Mapping[str, str], found: Sequence[str],
                  boost: float) -> list[Ranked]:
    """``ranked`` with ``boost`` added per identifier each chunk's text contains exactly, re-sorted;
    ``why`` names the identifiers matched."""
    if not found or boost <= 0:
        return list(ranked)
    out = []
    for chunk_id, score, why in ranked:
        matched = [term for term in found if term in texts.get(chunk_id, "")]
        if matched:
            added = round(boost * len(matched), 6)
            why = replace(why, literal_match=matched, literal_boost=added)
            score = round(score + added, 12)
        out.append((chunk_id, score, why))
    return sort_ranked(out)
