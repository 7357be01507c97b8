"""Extractors: mentions and triples from chunks, one module per extractor behind one protocol.

:func:`extractors_from_settings` builds the standard set once (patterns compiled once, reused
over every chunk); :func:`extract_all` runs them over a document and gives every triple
endpoint a mention, so every graph node has mentions.

Examples
--------
>>> from workbench.model import Chunk, Document
>>> from workbench.settings import ExtractionSettings
>>> extractors = extractors_from_settings(ExtractionSettings())
>>> text = "The checkout service depends on Redis and the token cache."
>>> doc = Document("d", "/d", "d", "text", text, "h")
>>> found = extract_all(doc, [Chunk("c1", "d", 0, text, 0, len(text))], extractors)
>>> sorted((t.subject, t.relation, t.object) for t in found.triples if t.origin == "pattern")
[('checkout service', 'depends_on', 'Redis'), ('checkout service', 'depends_on', 'token cache')]
>>> sorted({(m.surface, m.entity_type) for m in found.mentions})
[('Redis', 'technology'), ('The checkout service', 'service'), ('d', 'title'), ('token cache', 'service')]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ..text.name_keys import name_key
from .base import Extraction, Extractor, PatternTimeout
from .entities import EntityExtractor
from .llm import ChatClient, LLMError, LLMExtractor
from .names import GENERIC_TYPES, NameExtractor
from .nlp import NLPExtractor, NLPUnavailable
from .notes import DeclaredRelationExtractor, similar_note_candidates
from .patterns import RelationPatternExtractor
from ..model import Chunk, Document, Mention
from ..settings import ExtractionSettings

#: Raise when an extractor's code changes what it finds: every document is then extracted again
#: on the next ingest (embeddings are kept, being cached by text).
EXTRACTION_VERSION = 7

__all__ = [
    "EXTRACTION_VERSION",
    "Extraction",
    "Extractor",
    "PatternTimeout",
    "EntityExtractor",
    "NameExtractor",
    "RelationPatternExtractor",
    "DeclaredRelationExtractor",
    "LLMExtractor",
    "NLPExtractor",
    "NLPUnavailable",
    "similar_note_candidates",
    "extractors_from_settings",
    "extract_all",
    "extract_windows",
]


def extractors_from_settings(settings: ExtractionSettings, llm_client: ChatClient | None = None) -> list[Extractor]:
    """The standard extractors: relation phrases, typed entities, declared relations, general
    names; with ``extraction.nlp`` on, spaCy's parse; with ``extraction.llm`` on, the chat model
    ``llm_client`` as well.

    Build them once and reuse them: construction compiles every pattern (and raises a
    ``ValueError`` naming a pattern that does not compile). ``extraction.llm`` on without a client
    raises :class:`~workbench.extract.llm.LLMError`.
    """
    entities = EntityExtractor(settings.entity_patterns, settings.pattern_timeout_seconds, settings.comention,
                               comention_window=settings.comention_window,
                               max_comention_pairs=settings.max_comention_pairs)
    relations = RelationPatternExtractor(settings.relations, settings.pattern_timeout_seconds, type_of=entities.type_of)
    extractors: list[Extractor] = [relations, entities, DeclaredRelationExtractor()]
    if settings.names:
        extractors.append(NameExtractor())
    if settings.nlp:
        extractors.append(NLPExtractor())
    if settings.llm:
        if llm_client is None:
            raise LLMError("extraction.llm is on but no language model is configured: set WORKBENCH_LLM_BASE_URL and "
                           "WORKBENCH_LLM_MODEL (the variables the llm section names), or turn extraction.llm off")
        extractors.append(LLMExtractor(llm_client))
    return extractors


def extract_all(document: Document, chunks: Sequence[Chunk], extractors: Sequence[Extractor]) -> Extraction:
    """Run every extractor over the document, then mention every triple endpoint.

    A triple's subject or object that no mention in its chunk names (by
    :func:`~workbench.text.name_keys.name_key`) gets a mention typed from the triple, at its offset
    in the chunk text when found there (else -1). A general ``name`` or ``date`` mention of a
    name a typed extractor already found in the same chunk is dropped, so no mention counts
    twice (``title`` mentions stay: they tie each chunk to its document's title).
    """
    result = Extraction()
    for extractor in extractors:
        result.merge(extractor.extract(document, chunks))
    return _complete(result, chunks)


def extract_windows(document: Document, chunks: Sequence[Chunk], extractors: Sequence[Extractor],
                    size: int) -> Iterator[tuple[Sequence[Chunk], Extraction]]:
    """:func:`extract_all` over ``chunks`` a window of ``size`` chunks at a time: yields each
    window with what was found in it, so a large document is never held extracted whole.

    Together the windows give what :func:`extract_all` gives for the whole document: an
    extractor that reads the whole document (the names' evidence, the declared relations' first
    chunk, a problem line counted over every chunk) offers ``for_document(document, chunks)``,
    a view that extracts one window at a time, and may offer ``finish()``, the problems found
    after the last window. A document without chunks is one empty window.

    >>> from workbench.model import Chunk, Document
    >>> from workbench.settings import ExtractionSettings
    >>> text = ["Redis runs on Kubernetes.", "The auth service depends on Redis."]
    >>> doc = Document("d", "/d", "d", "text", " ".join(text), "h")
    >>> chunks = [Chunk(f"c{i}", "d", i, t, 0, len(t)) for i, t in enumerate(text)]
    >>> extractors = extractors_from_settings(ExtractionSettings())
    >>> windows = list(extract_windows(doc, chunks, extractors, size=1))
    >>> [len(window) for window, _ in windows]
    [1, 1]
    >>> whole = extract_all(doc, chunks, extractors)
    >>> sorted(map(repr, (m for _, found in windows for m in found.mentions))) == sorted(map(repr, whole.mentions))
    True
    """
    if size < 1:
        raise ValueError(f"a window holds at least one chunk, got size={size}")
    views = [begin(document, chunks) if (begin := getattr(e, "for_document", None)) else e for e in extractors]
    starts = range(0, len(chunks), size) if chunks else [0]
    for lo in starts:
        window = chunks[lo:lo + size]
        found = Extraction()
        for view in views:
            found.merge(view.extract(document, window))
        if lo == starts[-1]:
            for view in views:
                if hasattr(view, "finish"):
                    found.problems.extend(view.finish())
        yield window, _complete(found, window)


def _complete(result: Extraction, chunks: Sequence[Chunk]) -> Extraction:
    """Drop generic mentions a typed one already makes, then mention every triple endpoint."""
    typed = {(m.chunk_id, name_key(m.surface)) for m in result.mentions if m.entity_type not in GENERIC_TYPES}
    result.mentions = [m for m in result.mentions if m.entity_type == "title" or m.entity_type not in GENERIC_TYPES
                       or (m.chunk_id, name_key(m.surface)) not in typed]
    text_of = {chunk.id: chunk.text for chunk in chunks}
    mentioned = {(m.chunk_id, name_key(m.surface)) for m in result.mentions}
    for triple in result.triples:
        for surface, entity_type in ((triple.subject, triple.subject_type), (triple.object, triple.object_type)):
            key = name_key(surface)
            if not key or (triple.chunk_id, key) in mentioned:
                continue
            mentioned.add((triple.chunk_id, key))
            result.mentions.append(Mention(surface, triple.chunk_id, entity_type, _offset(text_of.get(triple.chunk_id, ""), surface)))
    return result


def _offset(text: str, surface: str) -> int:
    found = text.find(surface)
    return found if found >= 0 else text.lower().find(surface.lower())
