"""Sentences of a chunk, as exact substrings, and the cue words that mark a decision.

Extractive summaries (community reports, episodes, timelines) quote sentences; a quoted
sentence must stand in its chunk exactly as written, so it can be checked against the citation.

Examples
--------
>>> split_sentences("Sessions are stored in Redis. We decided to keep it.  Done")
['Sessions are stored in Redis.', 'We decided to keep it.', 'Done']
>>> states_decision("OK, go for the rollback."), states_decision("Hit rate 96%.")
(True, False)
"""

from __future__ import annotations

import re

__all__ = ["DECISION_CUES", "split_sentences", "sentence_starts", "states_decision", "sentence_naming"]

#: Phrases that state a decision (matched case-insensitively on word boundaries).
DECISION_CUES = (
    "we decided", "decided", "decision", "let's", "let us", "agreed", "we agree", "will move", "moves to",
    "go for", "we will", "we'll", "accepted", "approved",
)

_CUE = re.compile(r"\b(?:" + "|".join(re.escape(c) for c in DECISION_CUES) + r")\b", re.IGNORECASE)
# A sentence ends at . ! ? (or a line break) followed by space; headings and list items are lines.
_SENTENCE = re.compile(r"(?:[^\n.!?]|[.!?]+(?![\s.!?]|$))+[.!?]*")
_MIN_WORDS = 3
#: A line of wrapped prose at least this long, ending no sentence, goes on on the next line.
_WRAP_WIDTH = 40
_ENDS = (".", "!", "?", "。", "！", "？", ":", ";")
_BLOCK_START = re.compile(r"(?:[#>|`]|[-*+•][ \t]|\d+[.)][ \t]|@[\w.\-]+:|[^\W\d_a-z][\w\-]*(?:[ \t][\w\-]+){0,2}:[ \t])")


def split_sentences(text: str) -> list[str]:
    r"""The sentences of ``text``, stripped, each an exact substring of it. A line break inside a
    sentence of wrapped prose does not end it (see :func:`_wrapped`).

    >>> split_sentences("Reports are rebuilt every hour and the finance dashboard\nloads them directly.\n- Redis")
    ['Reports are rebuilt every hour and the finance dashboard\nloads them directly.', 'Redis']
    """
    return [sentence for _, sentence in _sentences(text)]


def _wrapped(line: str, following: str) -> bool:
    """Whether the line break between ``line`` and ``following`` wraps a sentence: the line ends
    no sentence, is no heading or table row, and the next line starts no block (a heading, list
    item, quote, table row, code fence, chat speaker or ``Field:``); the line fills a wrapped
    width (:data:`_WRAP_WIDTH`) or the next line goes on in lower case."""
    line, following = line.strip(), following.strip()
    if not line or not following or line.endswith(_ENDS) or line.startswith(("#", "|")):
        return False
    if _BLOCK_START.match(following):
        return False
    return len(line) >= _WRAP_WIDTH or following[:1].islower()


def _sentences(text: str):
    """``(start of the match, stripped sentence)`` of every sentence of ``text``."""
    spans = [(m.start(), m.end()) for m in _SENTENCE.finditer(text)]
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged:
            before = merged[-1]
            gap = text[before[1]:start]
            line = text[text.rfind("\n", 0, before[1]) + 1:before[1]]
            if gap.strip() == "" and gap.count("\n") == 1 and _wrapped(line, text[start:end]):
                merged[-1] = (before[0], end)
                continue
        merged.append((start, end))
    for start, end in merged:
        sentence = text[start:end].strip().lstrip("#-* ").strip()
        if sentence:
            yield start, sentence


def sentence_starts(text: str) -> list[int]:
    r"""Where each sentence of ``text`` starts, as offsets (the sentences :func:`split_sentences`
    finds; a text without one has one starting at 0).

    >>> sentence_starts("Redis is down. Kafka too.\nAnd the queue")
    [0, 14, 26]
    """
    return [start for start, _ in _sentences(text)] or [0]


_WORD = re.compile(r"\w+(?:'\w+)?")
# Words of a reply that say nothing of what is decided ("OK, agreed!", "Yes, fully agreed.").
_ASSENT = frozenset({"ok", "okay", "yes", "yep", "sure", "fine", "fully", "totally", "all", "then", "so", "too",
                     "me", "i", "+1", "good", "great", "done", "thanks"})


def states_decision(sentence: str) -> bool:
    """Whether a sentence uses one of :data:`DECISION_CUES` and says what about: a bare assent
    ("Agreed.", "OK, approved!") decides nothing a reader could act on.

    >>> states_decision("Agreed."), states_decision("Yes, fully agreed!"), states_decision("Agreed, we roll back.")
    (False, False, True)
    """
    found = _CUE.search(sentence)
    if found is None:
        return False
    rest = (sentence[:found.start()] + " " + sentence[found.end():]).casefold()
    return any(word not in _ASSENT for word in _WORD.findall(rest))


def sentence_naming(text: str, names: list[str]) -> str | None:
    """The first sentence of ``text`` with at least :data:`_MIN_WORDS` words naming one of ``names``
    (case-insensitive), else None."""
    folded = [n.casefold() for n in names if n]
    for sentence in split_sentences(text):
        low = sentence.casefold()
        if len(sentence.split()) >= _MIN_WORDS and any(n in low for n in folded):
            return sentence
    return None
