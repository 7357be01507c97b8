"""Typed relation discovery: a chat model asked how a new note relates to its candidate notes.

For each new note the caller finds candidates (its most similar notes, the most recent ones
when none is similar) and gives each a short id (``n1``, ``n2``...). The model is asked for
relations of the eight declared types only (:data:`~workbench.model.DECLARED_RELATION_TYPES`),
from the new note to a candidate, with a confidence. Every answer is checked: the relation must
be one of the eight, the target one of the ids offered, the confidence at least the minimum
(an answer without one counts :data:`~workbench.extract.llm.LLM_CONFIDENCE`). What passes is a
*candidate* (origin ``candidate``, the model's confidence), never a fact until accepted.

Examples
--------
>>> offered = [NoteCandidate("n1", "Kafka consumer lag", "How to drain a lagging consumer group.")]
>>> reply = '[{"target": "n1", "relation": "resolved_by", "confidence": 0.9},'
>>> reply += ' {"target": "n7", "relation": "RESOLVED_BY", "confidence": 0.9}]'
>>> triples, problems = parse_typed_relations(reply, "Report delay", offered, "c1", min_confidence=0.6)
>>> [(t.subject, t.relation, t.object, t.confidence, t.origin) for t in triples]
[('Report delay', 'RESOLVED_BY', 'Kafka consumer lag', 0.9, 'candidate')]
>>> problems
["chunk c1: the model named target 'n7', which was not offered (n1); skipped"]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..model import DECLARED_RELATION_TYPES, Triple

from .llm import LLM_CONFIDENCE, LLM_ORIGIN, _load_json

__all__ = ["NoteCandidate", "typed_relation_messages", "parse_typed_relations", "TYPED_RELATIONS"]

#: The relation types the model may answer with: the declared front-matter relations.
TYPED_RELATIONS = DECLARED_RELATION_TYPES
#: Characters of a note (new or candidate) shown to the model.
NOTE_PREVIEW_CHARS = 600

_SYSTEM_PROMPT = (
    "You link notes in a knowledge base. You are given a NEW note and CANDIDATE notes, each with an id. "
    "Say how the NEW note relates to candidates, using only these relation types: "
    + ", ".join(TYPED_RELATIONS) + ". A relation reads NEW -RELATION-> candidate (for example "
    "NEW RESOLVED_BY n2: the candidate n2 resolves the new note). Reply with JSON only: a list of objects "
    'with keys "target" (a candidate id), "relation" (one of the types) and "confidence" (0 to 1). '
    "Only state relations the texts support. Reply [] when there is none."
)


@dataclass(frozen=True)
class NoteCandidate:
    """A note offered to the model as a possible target."""

    id: str
    """The short id the model must answer with (``n1``...)."""
    title: str
    """Its title: the object of a relation found."""
    text: str
    """Its opening text, shown to the model."""


def typed_relation_messages(title: str, text: str, candidates: Sequence[NoteCandidate]) -> list[dict[str, str]]:
    """The chat messages asking how the note ``title`` relates to ``candidates``."""
    lines = [f"NEW note: {title}", text[:NOTE_PREVIEW_CHARS].strip(), "", "CANDIDATE notes:"]
    for candidate in candidates:
        lines.append(f"[{candidate.id}] {candidate.title}: {' '.join(candidate.text[:NOTE_PREVIEW_CHARS].split())}")
    return [{"role": "system", "content": _SYSTEM_PROMPT}, {"role": "user", "content": "\n".join(lines)}]


def parse_typed_relations(reply: str, title: str, candidates: Sequence[NoteCandidate], chunk_id: str,
                          min_confidence: float) -> tuple[list[Triple], list[str]]:
    """The checked relations of a reply as candidate triples ``title -TYPE-> candidate title``
    cited by ``chunk_id``, and one problem line per answer dropped (below ``min_confidence``
    dropped silently: that is the filter working)."""
    data = _load_json(reply)
    if isinstance(data, dict):
        data = data.get("relations", data.get("links"))
    if not isinstance(data, list):
        return [], [f"chunk {chunk_id}: the model's relations are not a JSON list; skipped"]
    offered = {c.id.casefold(): c for c in candidates}
    found: dict[tuple[str, str], Triple] = {}
    problems: list[str] = []
    for number, item in enumerate(data, start=1):
        if not isinstance(item, dict):
            problems.append(f"chunk {chunk_id}: item {number} of the model's relations is not an object; skipped")
            continue
        target = str(item.get("target") or "").strip().strip("[]")
        relation = str(item.get("relation") or "").strip().upper().replace(" ", "_").replace("-", "_")
        if relation not in TYPED_RELATIONS:
            problems.append(f"chunk {chunk_id}: the model gave relation {relation or '(none)'!r}, not one of "
                            f"{', '.join(TYPED_RELATIONS)}; skipped")
            continue
        candidate = offered.get(target.casefold())
        if candidate is None:
            problems.append(f"chunk {chunk_id}: the model named target {target!r}, which was not offered "
                            f"({', '.join(c.id for c in candidates)}); skipped")
            continue
        confidence = item.get("confidence")
        if not (isinstance(confidence, (int, float)) and not isinstance(confidence, bool) and 0 <= confidence <= 1):
            confidence = LLM_CONFIDENCE
        if confidence < min_confidence:
            continue
        key = (relation, candidate.title)
        if key not in found or found[key].confidence < confidence:
            found[key] = Triple(title, relation, candidate.title, chunk_id, float(confidence), LLM_ORIGIN, "note", "note")
    return list(found.values()), problems
