"""The one interface every extractor implements, and what it returns.

An extractor reads a :class:`~workbench.model.Document` and its chunks and returns an
:class:`Extraction`: the mentions and triples it found, plus problems worth showing (a user
pattern that timed out, an LLM answer that was not JSON). Problems never stop an ingest.

Examples
--------
>>> from workbench.model import Mention
>>> a = Extraction(mentions=[Mention("Redis", "c1")])
>>> b = Extraction(problems=["pattern x timed out"])
>>> a.merge(b) is a, len(a.mentions), a.problems
(True, 1, ['pattern x timed out'])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import regex

from ..model import Chunk, Document, Mention, Triple

__all__ = ["Extraction", "Extractor", "PatternTimeout", "GuardedPattern", "compile_user_regex"]


class PatternTimeout(Exception):
    """A user-supplied regular expression ran longer than its budget on one chunk."""

    def __init__(self, label: str, pattern: str, chunk_id: str, seconds: float) -> None:
        self.label = label
        self.pattern = pattern
        self.chunk_id = chunk_id
        self.seconds = seconds
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """The problem line shown to the user."""
        return f"pattern {self.label} '{self.pattern}' timed out on chunk {self.chunk_id} after {self.seconds:.1f} s; skipped"


@dataclass
class Extraction:
    """What extractors found in one document."""

    mentions: list[Mention] = field(default_factory=list)
    """Entities named in the chunks."""
    triples: list[Triple] = field(default_factory=list)
    """Relations stated by the chunks."""
    problems: list[str] = field(default_factory=list)
    """Things that went wrong without stopping the extraction, one line each."""

    def merge(self, other: Extraction) -> Extraction:
        """Append ``other``'s findings to this one, in place; returns ``self`` for chaining."""
        self.mentions.extend(other.mentions)
        self.triples.extend(other.triples)
        self.problems.extend(other.problems)
        return self


@runtime_checkable
class Extractor(Protocol):
    """Finds mentions and triples in a document's chunks.

    Implementations compile their patterns once: one extractor object is reused over
    thousands of documents.
    """

    name: str

    def extract(self, document: Document, chunks: Sequence[Chunk]) -> Extraction:
        """Mentions and triples stated by ``chunks`` (which belong to ``document``)."""
        ...


def compile_user_regex(pattern: str, label: str, flags: int = 0) -> regex.Pattern:
    """Compile a user-supplied regular expression, or raise a ``ValueError`` naming it.

    Examples
    --------
    >>> compile_user_regex("(unclosed", "service")
    Traceback (most recent call last):
    ...
    ValueError: invalid regular expression for service: '(unclosed' (missing ) at position 9); fix it in settings.yaml
    """
    try:
        return regex.compile(pattern, flags | regex.VERSION0)
    except regex.error as exc:
        raise ValueError(f"invalid regular expression for {label}: '{pattern}' ({exc}); fix it in settings.yaml") from None


class GuardedPattern:
    """A user-supplied regex run with a time budget per chunk.

    A run past the budget is stopped and reported as a problem line; after
    ``max_timeouts`` such runs the pattern is switched off for the rest of the ingest, so
    one bad pattern cannot cost a second per chunk over a whole corpus.

    Examples
    --------
    >>> guarded = GuardedPattern(r"(?P<x>a|aa)+$", "demo", timeout_seconds=0.2)
    >>> problems = []
    >>> guarded.finditer("a" * 60 + "b", "chunk-1", problems)
    []
    >>> problems
    ["pattern demo '(?P<x>a|aa)+$' timed out on chunk chunk-1 after 0.2 s; skipped"]
    """

    def __init__(self, pattern: str, label: str, timeout_seconds: float, flags: int = 0, max_timeouts: int = 3) -> None:
        self.compiled = compile_user_regex(pattern, label, flags)
        self.pattern = pattern
        self.label = label
        self.timeout_seconds = timeout_seconds
        self.max_timeouts = max_timeouts
        self.timeouts = 0

    @property
    def disabled(self) -> bool:
        """Whether the pattern timed out too often and is no longer run."""
        return self.timeouts >= self.max_timeouts

    def finditer(self, text: str, chunk_id: str, problems: list[str]) -> list:
        """Matches in ``text``; on a timeout, none, and a line appended to ``problems``."""
        if self.disabled:
            return []
        try:
            return list(self.compiled.finditer(text, timeout=self.timeout_seconds))
        except TimeoutError:
            self.timeouts += 1
            problems.append(PatternTimeout(self.label, self.pattern, chunk_id, self.timeout_seconds).message)
            if self.disabled:
                problems.append(
                    f"pattern {self.label} '{self.pattern}' timed out {self.timeouts} times; "
                    "switched off for the rest of this ingest"
                )
            return []

    def fullmatch(self, text: str):
        """The match if the whole of ``text`` matches; ``None`` on no match or a timeout."""
        if self.disabled:
            return None
        try:
            return self.compiled.fullmatch(text, timeout=self.timeout_seconds)
        except TimeoutError:
            return None
