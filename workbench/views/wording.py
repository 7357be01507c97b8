"""Counts as people read them: "1 document", "3 documents", "0 entities"; an ingest's stages.

>>> counted(1, "document"), counted(3, "chunk"), counted(0, "entity", "entities")
('1 document', '3 chunks', '0 entities')
>>> stage_text("ingest", 1_200_000, 30_000_000), stage_text("context graph", 0, 1), stage_text("context graph", 1, 1)
('ingest: 1,200,000 of 30,000,000 characters of text', 'context graph...', 'context graph: done')
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..runtime.progress import COUNTED_STAGES, time_left

__all__ = ["counted", "redone_for_settings", "stage_text", "names_text", "plain_reason", "fallback_notice"]

#: Settings a retrieval reason may name, as a reader says them.
_SETTING_WORDS = {
    "seed_similarity_threshold": "the closeness an entity name needs to start the walk",
    "min_vector_score": "the closeness a passage needs to count as found",
    "max_seeds": "the most entities the walk starts from",
    "similar_notes_threshold": "the closeness two notes need to be called similar",
}
#: graphrag's count of the names a question writes whole ("0 entities named in the query,").
_COUNT_NAMED = re.compile(r"\b\d+ entit(?:y|ies) named in the query,")
#: paths' list of the names a question writes ("it names Redis, Data team" up to ", but" or ";").
_IT_NAMES = re.compile(r"it names (no entity of the graph|.+?)(, but |;|$)")
_SETTING = re.compile(r"\b(?:[a-z]+\.)?([a-z]+(?:_[a-z]+)+)\s*=\s*([-\d.]+)")


def counted(count: int, word: str, many: str | None = None) -> str:
    """``count`` and ``word``, in ``many`` (default: ``word`` + "s") unless the count is one."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


def redone_for_settings(files: int) -> str:
    """Why an ingest wrote ``files`` unchanged files again, for people.

    >>> redone_for_settings(1)
    '1 unchanged file chunked and extracted again: the chunking or extraction settings are not those it was ingested with (a chunk whose text stands keeps its vector)'
    """
    return (f"{counted(files, 'unchanged file')} chunked and extracted again: the chunking or extraction settings "
            "are not those it was ingested with (a chunk whose text stands keeps its vector)")


def stage_text(stage: str, done: int, total: int, seconds: float | None = None) -> str:
    """One line of an ingest's progress (``progress(stage, done, total)``) for people; given the
    ``seconds`` the stage has taken so far, with the time left at the rate measured.

    >>> stage_text("ingest", 10_000_000, 30_000_000, seconds=60.0)
    'ingest: 10,000,000 of 30,000,000 characters of text, 2 min 0 s left'
    """
    if stage not in COUNTED_STAGES:
        return f"{stage}: done" if done >= total else f"{stage}..."
    left = time_left(done, total, seconds) if seconds is not None and done < total else None
    return f"{stage}: {done:,} of {total:,} {COUNTED_STAGES[stage][1]}" + (f", {left}" if left else "")


def names_text(names: Sequence[str]) -> str:
    """What a question names, in words: the entities of the graph it writes, or none.

    >>> names_text(["Data team", "Redis"]), names_text([])
    ('it names Data team, Redis', 'it names no entity of the graph')
    """
    return f"it names {', '.join(names)}" if names else "it names no entity of the graph"


def plain_reason(reason: str, names: Sequence[str] | None = None) -> str:
    """A retrieval reason without setting names: ``name=value`` said in words, the value kept.
    Given ``names``, the entities the question names (one list for every column of a page), what
    a reason says the question names is said from them (graphrag counts only the names written
    whole in their own case as named seeds: "0 entities named in the query" beside another mode's
    "it names Data team").

    >>> plain_reason("no entity name reached seed_similarity_threshold=0.3 (best 0.21)")
    'no entity name reached the closeness an entity name needs to start the walk (0.3) (best 0.21)'
    >>> plain_reason("graphrag.some_new_limit=5 hit")
    'the some new limit (5) hit'
    >>> plain_reason("0 entities named in the query, 3 entity names reached seed_similarity_threshold=0.3", ["Data team"])
    'it names Data team; 3 entity names reached the closeness an entity name needs to start the walk (0.3)'
    >>> plain_reason("no structural reading: it names delay, Data team, but asks neither", ["Data team"])
    'no structural reading: it names Data team, but asks neither'
    """
    def said(match: re.Match) -> str:
        name, value = match.group(1), match.group(2)
        return f"{_SETTING_WORDS.get(name, 'the ' + name.replace('_', ' '))} ({value})"

    if names is not None:
        reason = _COUNT_NAMED.sub(names_text(names) + ";", reason)
        reason = _IT_NAMES.sub(lambda m: names_text(names) + m.group(2), reason)
    return _SETTING.sub(said, reason)


#: Modes a strategy falls back to when a store or the model cannot answer, and what each leaves out.
_FALLBACKS = {"keyword_only": "keyword search alone: no vector similarity and no graph walk",
              "vector_only": "hybrid search without the graph walk"}


def fallback_notice(mode_requested: str, mode_used: str, reason: str | None) -> str | None:
    """The warning a page shows when a strategy answered in a fallback mode because something
    was unavailable (the vector store, the model), or None when it answered as asked.

    >>> fallback_notice("graphrag", "keyword_only", "vector store unavailable: connection refused")
    'graphrag fell back to keyword search alone: no vector similarity and no graph walk (vector store unavailable: connection refused).'
    >>> fallback_notice("graphrag", "full_graphrag", None) is None
    True
    """
    if mode_used not in _FALLBACKS or mode_used == mode_requested:
        return None
    because = f" ({reason.split('; ')[0]})" if reason else ""
    return f"{mode_requested} fell back to {_FALLBACKS[mode_used]}{because}."
