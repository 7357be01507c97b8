"""Episodes: the sessions of a conversation log, split by time gaps, summarised extractively.

A conversation document (a ``.jsonl`` chat log) is chunked one message per chunk, each with
its speaker and timestamp. Consecutive messages belong to one session until a pause longer
than ``session_gap_minutes``. Each session's :class:`~workbench.model.Episode` names its
participants (by messages sent), the entities discussed (typed entities first, dates left
out) and the sentences that state a decision ("we decided", "let's", "agreed", "will
move"... see :data:`workbench.text.sentences.DECISION_CUES`), each with its time and chunk.

Examples
--------
>>> from workbench.model import Chunk
>>> msgs = [Chunk("m1", "chat", 0, "a: hi", 0, 5, "2024-05-02T09:00:00Z", "a"),
...         Chunk("m2", "chat", 1, "b: let's ship it.", 6, 20, "2024-05-02T09:10:00Z", "b"),
...         Chunk("m3", "chat", 2, "a: next day", 21, 30, "2024-05-03T09:00:00Z", "a")]
>>> [[c.id for c in s] for s in split_sessions(msgs, gap_minutes=60)]
[['m1', 'm2'], ['m3']]
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime

from ..context_graph.graph import ContextGraph
from ..text.sentences import split_sentences, states_decision
from ..model import Chunk, Decision, Episode
from ..settings import setting_default

__all__ = ["split_sessions", "summarize_session", "episodes_of", "parse_time"]

_GENERIC = {"name", "title", "date"}


def parse_time(stamp: str | None) -> datetime | None:
    """An ISO 8601 time (``Z`` accepted) as a naive UTC-less datetime, None if unreadable."""
    if not stamp:
        return None
    try:
        value = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value.replace(tzinfo=None)


def split_sessions(messages: Sequence[Chunk],
                   gap_minutes: float = setting_default("episodes.session_gap_minutes")) -> list[list[Chunk]]:
    """Messages in order, split where the pause between two exceeds ``gap_minutes``.

    An undated message stays in the session of the message before it.
    """
    sessions: list[list[Chunk]] = []
    last: datetime | None = None
    for message in sorted(messages, key=lambda c: c.ordinal):
        at = parse_time(message.timestamp)
        if not sessions or (at is not None and last is not None and (at - last).total_seconds() > gap_minutes * 60):
            sessions.append([])
        sessions[-1].append(message)
        last = at or last
    return sessions


def _without_speaker(text: str, speaker: str | None) -> str:
    """A message's text without its leading ``speaker:``."""
    if speaker and text.startswith(speaker):
        return text[len(speaker):].lstrip(": ").strip()
    return text


def summarize_session(document: str, messages: Sequence[Chunk], graph: ContextGraph | None = None,
                      max_entities: int = setting_default("episodes.max_entities")) -> Episode:
    """The extractive summary of one session (see the module docstring)."""
    speakers = Counter(m.speaker for m in messages if m.speaker)
    participants = sorted(speakers.items(), key=lambda item: (-item[1], item[0]))
    named: Counter[str] = Counter()
    if graph is not None:
        for m in messages:
            for key in graph.passages.entities_of.get(m.id, ()):
                if key in graph and graph.entity(key).type != "date":
                    named[key] += 1
    speaker_keys = {s.lstrip("@").casefold() for s in speakers}

    def order(item: tuple[str, int]) -> tuple:
        entity = graph.entity(item[0]) if graph is not None else None
        return (entity is not None and entity.type in _GENERIC, -item[1], item[0])

    # General names (a capitalised "Hit", the log's own title) are noise unless said twice.
    entities = [graph.name(k) for k, n in sorted(named.items(), key=order)
                if graph is not None and graph.name(k).lstrip("@").casefold() not in speaker_keys
                and graph.entity(k).type != "title" and (graph.entity(k).type not in _GENERIC or n >= 2)][:max_entities]
    decisions = [Decision(sentence, m.id, m.timestamp, m.speaker)
                 for m in messages for sentence in split_sentences(m.text)
                 if states_decision(_without_speaker(sentence, m.speaker))]
    start, end = messages[0].timestamp, messages[-1].timestamp
    ident = hashlib.sha1(f"{document}\n{start}\n{messages[0].id}".encode()).hexdigest()[:10]
    return Episode(id="e-" + ident, document=document, start=start, end=end, participants=participants,
                   entities=entities, decisions=decisions, chunk_ids=tuple(m.id for m in messages))


def episodes_of(conversations: Iterable[tuple[str, Sequence[Chunk]]], graph: ContextGraph | None = None,
                gap_minutes: float = setting_default("episodes.session_gap_minutes"),
                max_entities: int = setting_default("episodes.max_entities")) -> list[Episode]:
    """Every session of every ``(document id, its chunks)`` conversation, by start time."""
    found = [summarize_session(document, session, graph, max_entities)
             for document, chunks in conversations
             for session in split_sessions(chunks, gap_minutes) if session]
    return sorted(found, key=lambda e: (e.start or "", e.document))
