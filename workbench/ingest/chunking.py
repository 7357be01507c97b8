"""A :class:`~workbench.model.Document` -> :class:`~workbench.model.Chunk` s.

Chunks are the unit of provenance, so they stay small and close to the author's structure:

- every paragraph (text between blank lines) is its own chunk, except a heading (a paragraph of
  Markdown heading lines, ``# ...`` or underlined with ``===``/``---``) or a tiny paragraph
  (shorter than ``min_chars``), which joins what follows it: the paragraph after it when the
  two fit, else that paragraph's first sentences that fit with it. A title alone says nothing
  a reader can use, and a vault of titled notes would hold as many title chunks as notes;
- a paragraph longer than ``max_chars`` is split on sentence ends (``. ! ?`` followed by
  whitespace, and ``。！？``), packing whole sentences up to ``max_chars``;
- a sentence longer than ``max_chars`` is cut at the last whitespace before ``max_chars``
  (or at ``max_chars`` when there is none, as in unspaced Chinese);
- in a conversation each message (:class:`~workbench.model.Segment`) is its own chunk, split
  further only when longer than ``max_chars``; no chunk crosses a message boundary;
- with ``pack``, consecutive chunks of a text (not of a conversation: its messages stay apart)
  are joined while the joined one fits in ``max_chars``: fewer, longer chunks (a file of short
  paragraphs, about a third of them), each citing several paragraphs. :func:`packs` says when
  the settings ask for it: always, or for a document of ``pack_from_chars`` characters or more.

Chunk text is always ``doc.text[start:end]``: surrounding whitespace is dropped by moving the
offsets, never by editing the text. All the work is linear in the length of the text.

Examples
--------
>>> from workbench.model import Document
>>> doc = Document(id="a.md", source_path="/a.md", title="A", kind="markdown",
...                text="# Auth\\n\\nThe auth service depends on Redis.\\n\\nIt runs on Kubernetes.",
...                content_hash="")
>>> [(c.ordinal, c.text) for c in chunk_document(doc)]
[(0, '# Auth\\n\\nThe auth service depends on Redis.'), (1, 'It runs on Kubernetes.')]
"""

from __future__ import annotations

import hashlib
import re
from typing import Iterator

from ..model import Chunk, Document
from ..settings import setting_default

__all__ = ["TINY_PARAGRAPH_CHARS", "chunk_document", "chunk_id", "iter_sentences"]

#: Paragraphs shorter than this join the paragraph that follows them (labels, short headings).
TINY_PARAGRAPH_CHARS = 40

_NON_SPACE = re.compile(r"\S")
# A paragraph of ATX heading lines ("# Title", "## Part"), or one line underlined (setext).
_HEADING = re.compile(r"(?:#{1,6}(?:[ \t][^\n]*)?(?:\n|\Z))+\Z|[^\n]+\n(?:=+|-+)[ \t]*\Z")
_PARAGRAPH_BREAK = re.compile(r"\n(?:[^\S\n]*\n)+")
# Sentence ends. The English form must be followed by whitespace or the end of the text; that
# check is done in Python so the pattern never rescans a run of punctuation (linear time).
_SENTENCE_END = re.compile(
    r"(?P<latin>[.!?]+[\"')\]\u2019\u201d\u00bb]*)"
    r"|(?P<cjk>[\u3002\uff01\uff1f]+[\u201d\u2019\u300d\u300f\uff09)]*)"
    r"|(?P<para>\n(?:[^\S\n]*\n)+)"
)


def chunk_id(document_id: str, ordinal: int, text: str) -> str:
    """Stable chunk id: the first 16 hex digits of SHA-1 over document id, ordinal and text.

    Examples
    --------
    >>> chunk_id("notes/a.md", 0, "Hello.") == chunk_id("notes/a.md", 0, "Hello.")
    True
    >>> len(chunk_id("notes/a.md", 0, "Hello."))
    16
    """
    payload = f"{document_id}\x00{ordinal}\x00{text}".encode("utf-8", errors="surrogatepass")
    return hashlib.sha1(payload).hexdigest()[:16]


def _trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The span without surrounding whitespace, or None when it is all whitespace."""
    first = _NON_SPACE.search(text, start, end)
    if first is None:
        return None
    start = first.start()
    return start, start + len(text[start:end].rstrip())


def iter_sentences(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int]]:
    """Yield ``(start, end)`` spans of the sentences of ``text[start:end]``, whitespace trimmed.

    A sentence ends after ``. ! ?`` (with any closing quotes or brackets) followed by
    whitespace, after ``。！？``, or at a blank line.

    Examples
    --------
    >>> text = "Redis is fast. Is it? 它很快。真的！"
    >>> [text[s:e] for s, e in iter_sentences(text)]
    ['Redis is fast.', 'Is it?', '它很快。', '真的！']
    """
    end = len(text) if end is None else end
    position = start
    for match in _SENTENCE_END.finditer(text, start, end):
        if match.lastgroup == "latin":
            after = match.end()
            if after < end and not text[after].isspace():
                continue  # "3.14", "e.g.x": not a sentence end
            cut, resume = after, after
        elif match.lastgroup == "cjk":
            cut, resume = match.end(), match.end()
        else:
            cut, resume = match.start(), match.end()
        span = _trim(text, position, cut)
        if span is not None:
            yield span
        position = resume
    span = _trim(text, position, end)
    if span is not None:
        yield span


def _hard_split(text: str, start: int, end: int, max_chars: int) -> Iterator[tuple[int, int]]:
    """Cut a span with no usable sentence end into pieces of at most ``max_chars``."""
    position = start
    while position < end:
        limit = position + max_chars
        if limit >= end:
            cut = end
        else:
            # The last whitespace within the window, if it is not too early to be useful.
            cut = max(text.rfind(space, position + 1, limit + 1) for space in (" ", "\n", "\t", "\u3000"))
            if cut <= position + max_chars // 2:
                cut = limit
        span = _trim(text, position, cut)
        if span is not None:
            yield span
        position = cut


def _split_long(text: str, start: int, end: int, max_chars: int) -> Iterator[tuple[int, int]]:
    """Pack whole sentences into spans of at most ``max_chars``; cut over-long sentences."""
    current: tuple[int, int] | None = None
    for s_start, s_end in iter_sentences(text, start, end):
        if current is not None and s_end - current[0] <= max_chars:
            current = (current[0], s_end)
            continue
        if current is not None:
            yield current
        if s_end - s_start <= max_chars:
            current = (s_start, s_end)
            continue
        pieces = list(_hard_split(text, s_start, s_end, max_chars))
        yield from pieces[:-1]
        current = pieces[-1]  # the tail may still take the next sentences
    if current is not None:
        yield current


def _paragraph_spans(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    position = start
    for match in _PARAGRAPH_BREAK.finditer(text, start, end):
        span = _trim(text, position, match.start())
        if span is not None:
            yield span
        position = match.end()
    span = _trim(text, position, end)
    if span is not None:
        yield span


def _fitted(text: str, start: int, end: int, max_chars: int) -> Iterator[tuple[int, int]]:
    if end - start <= max_chars:
        yield start, end
    else:
        yield from _split_long(text, start, end, max_chars)


def _chunk_spans(text: str, start: int, end: int, max_chars: int, min_chars: int) -> Iterator[tuple[int, int]]:
    pending: tuple[int, int] | None = None  # headings and tiny paragraphs waiting for what follows
    for p_start, p_end in _paragraph_spans(text, start, end):
        heading = _HEADING.match(text, p_start, p_end) is not None
        if pending is not None:
            p_start, pending = pending[0], None  # joined: _fitted packs them with its first sentences
        if (heading or p_end - p_start < min_chars) and p_end - p_start <= max_chars:
            pending = (p_start, p_end)
            continue
        yield from _fitted(text, p_start, p_end, max_chars)
    if pending is not None:
        yield from _fitted(text, *pending, max_chars)


def _packed(spans: Iterator[tuple[int, int]], max_chars: int) -> Iterator[tuple[int, int]]:
    """Consecutive ``spans`` joined while the joined span is at most ``max_chars`` long."""
    current: tuple[int, int] | None = None
    for start, end in spans:
        if current is not None and end - current[0] <= max_chars:
            current = (current[0], end)
            continue
        if current is not None:
            yield current
        current = (start, end)
    if current is not None:
        yield current


def packs(doc: Document, pack_paragraphs: bool = setting_default("chunking.pack_paragraphs"),
          pack_from_chars: int | None = setting_default("chunking.pack_from_chars")) -> bool:
    """Whether ``doc``'s paragraphs are packed: in every document with ``pack_paragraphs``, else
    in one of at least ``pack_from_chars`` characters (:func:`chunk_document` still never joins a
    conversation's messages).

    >>> from workbench.model import Document
    >>> big = Document(id="b.md", source_path="/b.md", title="B", kind="markdown", text="x" * 50, content_hash="")
    >>> packs(big, False, 50), packs(big, False, 51), packs(big, False, None), packs(big, True, None)
    (True, False, False, True)
    """
    return pack_paragraphs or (pack_from_chars is not None and len(doc.text) >= pack_from_chars)


def chunk_document(doc: Document, max_chars: int = setting_default("chunking.max_chars"),
                   min_chars: int = TINY_PARAGRAPH_CHARS,
                   pack: bool = setting_default("chunking.pack_paragraphs")) -> list[Chunk]:
    """Split a document into chunks on paragraph, sentence and message boundaries.

    Parameters
    ----------
    doc
        The document. When it has segments (a conversation), each segment is chunked on its
        own and the chunks carry its speaker and timestamp; text outside segments is ignored.
    max_chars
        Largest chunk, in characters.
    min_chars
        Paragraphs shorter than this join what follows them, as headings do.
    pack
        Join consecutive chunks of a text while they fit in ``max_chars`` (a conversation's
        messages are never joined).

    Returns
    -------
    list of Chunk
        In document order, non-overlapping, each ``doc.text[start:end]``, ordinals from 0.
        The timestamp is the segment's, else the document's date.

    Raises
    ------
    ValueError
        When ``max_chars`` is smaller than 1.
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, got {max_chars}")
    text = doc.text
    if doc.segments:
        regions = [(max(0, s.start), min(len(text), s.end), s.speaker, s.timestamp or doc.date)
                   for s in sorted(doc.segments, key=lambda s: s.start)]
    else:
        regions = [(0, len(text), None, doc.date)]
    chunks: list[Chunk] = []
    for r_start, r_end, speaker, timestamp in regions:
        whole = _trim(text, r_start, r_end) if r_start < r_end else None
        if whole is None:
            continue
        if doc.segments and whole[1] - whole[0] <= max_chars:
            spans: Iterator[tuple[int, int]] = iter([whole])  # a message that fits stays whole
        else:
            spans = _chunk_spans(text, whole[0], whole[1], max_chars, min_chars)
            if pack and not doc.segments:
                spans = _packed(spans, max_chars)
        for start, end in spans:
            piece = text[start:end]
            ordinal = len(chunks)
            chunks.append(Chunk(
                id=chunk_id(doc.id, ordinal, piece), document_id=doc.id, ordinal=ordinal,
                text=piece, start=start, end=end, timestamp=timestamp, speaker=speaker,
            ))
    return chunks
