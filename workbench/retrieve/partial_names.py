"""Names a question writes in part: "the Stanford gene therapy trial" for the "Stanford Retinal Gene
Therapy Trial Phase II".

The name lookup (:class:`~workbench.context_graph.passages.NameMatcher`) finds a name written whole.
A question often shortens it. Each *phrase* the question writes from a capitalised word up to the
next function word or mark, outside the names found whole, is looked up in the entity-name index
by its embedding; the most similar name that holds every word of the phrase, in order, is the
entity it names. Holding the words keeps a phrase from naming what it only resembles ("the Green
performer" names no "Green Day").

Examples
--------
>>> phrases("How does Chen's CRISPR work relate to the Stanford gene therapy trial?", [(9, 13), (44, 52)])
["Chen's CRISPR work relate", 'Stanford gene therapy trial']
>>> phrases("Who directed Three Violent People?", [(13, 33)])
[]
>>> holds_in_order("stanford gene therapy trial", "stanford retinal gene therapy trial phase ii")
True
>>> holds_in_order("green performer", "green day")
False
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..context_graph.passages import words_of
from ..extract.names import name_words
from ..text.tokenize import ENGLISH_STOPWORDS
from .vector import embed_query, entity_query

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView

__all__ = ["MIN_PHRASE_WORDS", "CANDIDATES", "phrases", "holds_in_order", "partial_name_seeds"]

#: A phrase of one word is a name written whole or no name: only longer phrases are looked up.
MIN_PHRASE_WORDS = 2
#: Names compared per phrase, most similar first.
CANDIDATES = 10


def phrases(question: str, named_spans: Sequence[tuple[int, int]]) -> list[str]:
    """The runs of words from a capitalised word (not the question's first) to the next stopword or
    mark, of at least :data:`MIN_PHRASE_WORDS` words, that are not a name of ``named_spans`` written
    whole (a run may begin with one: "Stanford" in "Stanford gene therapy trial")."""
    words = name_words(question)
    whole = {(start, end) for start, end in named_spans}
    found: list[str] = []
    run: list[tuple[str, int, int]] = []

    def close() -> None:
        if len(run) >= MIN_PHRASE_WORDS and (run[0][1], run[-1][2]) not in whole:
            found.append(question[run[0][1]:run[-1][2]])
        run.clear()

    previous_end = 0
    for number, (word, start, end) in enumerate(words):
        gap = question[previous_end:start]
        previous_end = end
        if run and (word in ENGLISH_STOPWORDS or any(mark in gap for mark in ",.;:?!()\"")):
            close()
        if word in ENGLISH_STOPWORDS:
            continue
        if run or (number > 0 and question[start].isupper()):
            run.append((word, start, end))
    close()
    return found


def holds_in_order(phrase_words: str, name_words_: str) -> bool:
    """Whether every word of ``phrase_words`` is a word of ``name_words_``, in the same order."""
    remaining = iter(name_words_.split(" "))
    return all(any(word == other for other in remaining) for word in phrase_words.split(" "))


def partial_name_seeds(ws: WorkspaceView, question: str, named_spans: Sequence[tuple[int, int]]) -> dict[str, str]:
    """Entity key -> the phrase of ``question`` that names it in part, for each phrase that does."""
    graph = ws.graph
    seeds: dict[str, str] = {}
    for phrase in phrases(question, named_spans):
        wanted = words_of(phrase)
        for match in entity_query(ws, embed_query(ws, phrase), CANDIDATES):
            if match.id in graph and holds_in_order(wanted, words_of(graph.name(match.id))):
                seeds.setdefault(match.id, phrase)
                break
    return seeds
