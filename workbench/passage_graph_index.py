"""A graph of passages and the names they mention, built from stored chunks without an LLM.

Passages (chunks) are nodes next to entities, so Personalized PageRank mass lands on passages
directly. Entities come from cheap, deterministic cues that hold in most prose:

- **titles**: a document's title is an entity that *titles* every chunk of the document;
- **proper-noun phrases**: runs of capitalised words ("Carl Rogers", "University of Copenhagen");
- **quoted names**: text between quotation marks ("Hello Love");
- **numbers and dates**: years and numbers with four or more digits ("1963").

Every chunk is linked to every known name it contains (found by n-gram lookup, so a passage
that mentions another passage's title is linked to it: the two-hop bridge). Names whose keys
differ only slightly ("Wiley-Blackwell" / "Wiley Blackwell Publishing") get synonym edges by
character-trigram similarity.

Examples
--------
>>> index = build_passage_graph(
...     [("c1", "d1", "Ann Lee\\nAnn Lee was born in Oslo."), ("c2", "d2", "Oslo\\nOslo is a city.")],
...     {"d1": "Ann Lee", "d2": "Oslo"})
>>> sorted(index.passage_entities["c1"])
['ann lee', 'oslo']
>>> index.title_of_chunk["c2"]
'oslo'
>>> index.entities_in("Where was Ann Lee born?")
['ann lee']
"""

from __future__ import annotations

import re
import threading
import weakref
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import networkx as nx
import numpy as np

from .ppr import PageRankIndex

__all__ = ["PassageGraphIndex", "build_passage_graph", "passage_graph_for", "entity_key", "extract_names",
           "trigram_similarity"]

# A word of a name: letters/digits with inner apostrophes, dots or hyphens ("O'Neil", "U.S.").
_WORD = re.compile(r"[^\W_]+(?:['\u2019.\-&][^\W_]+)*", re.UNICODE)
# Lower-case words allowed inside a proper-noun phrase ("Bank of England", "Leonardo da Vinci").
_CONNECTORS = {"of", "the", "de", "da", "del", "der", "di", "du", "la", "le", "von", "van", "and", "&", "for", "on", "y"}
# Capitalised words that start sentences without naming anything.
_STOP_NAMES = {
    "the", "a", "an", "it", "its", "he", "she", "his", "her", "they", "their", "this", "that", "these", "those",
    "in", "on", "at", "by", "for", "from", "with", "as", "after", "before", "during", "when", "while", "since",
    "there", "here", "who", "what", "which", "where", "why", "how", "whose", "is", "was", "are", "were", "and",
    "but", "or", "if", "also", "however", "although", "both", "some", "many", "most", "one", "two", "of", "to",
    "we", "i", "you", "our", "my", "not", "no", "all", "other", "each", "its", "did", "does", "do", "has", "have",
}
_QUOTED = re.compile(r"[\"\u201c`]{1,2}\s*([^\"\u201c\u201d`']{2,80}?)\s*(?:[\"\u201d]|'')")
_NUMBER = re.compile(r"\b\d{4,}\b|\b\d{1,2} (?:January|February|March|April|May|June|July|August|September|"
                     r"October|November|December) \d{4}\b|\b(?:January|February|March|April|May|June|July|"
                     r"August|September|October|November|December) \d{1,2}, \d{4}\b")
_KEY_DROP = re.compile(r"[^\w\s]", re.UNICODE)
_ARTICLES = ("the ", "a ", "an ")


def entity_key(name: str) -> str:
    """Fold case, punctuation, spacing and a leading article: the identity of a name.

    >>> entity_key("The  Wiley-Blackwell")
    'wiley blackwell'
    """
    key = " ".join(_KEY_DROP.sub(" ", name.casefold()).split())
    for article in _ARTICLES:
        if key.startswith(article) and len(key) > len(article):
            key = key[len(article):]
    return key


def _tokens(text: str) -> list[tuple[str, int, int]]:
    return [(entity_key(m.group()), m.start(), m.end()) for m in _WORD.finditer(text)]


def extract_names(text: str) -> list[str]:
    """Proper-noun phrases, quoted names and numbers/dates in ``text``, as written, in order.

    >>> extract_names('Carl Rogers wrote "On Becoming a Person" in 1961 at the University of Chicago.')
    ['Carl Rogers', 'On Becoming a Person', 'Becoming', 'Person', '1961', 'University of Chicago']
    """
    found: list[tuple[int, str]] = []
    words = list(_WORD.finditer(text))
    i = 0
    while i < len(words):
        word = words[i].group()
        if word[:1].isupper():
            j = i + 1
            while j < len(words):
                nxt = words[j].group()
                gap = text[words[j - 1].end():words[j].start()]
                if gap.strip(" -") or "\n" in gap:  # punctuation ends a name
                    break
                if nxt[:1].isupper() or (nxt.casefold() in _CONNECTORS and j + 1 < len(words)
                                         and words[j + 1].group()[:1].isupper()):
                    j += 1
                    continue
                break
            first, last = i, j
            while first < last and words[first].group().casefold() in _STOP_NAMES:
                first += 1
            while first < last and words[last - 1].group().casefold() in _CONNECTORS:
                last -= 1
            if first < last:
                found.append((words[first].start(), " ".join(w.group() for w in words[first:last])))
            i = j
        else:
            i += 1
    found.extend((m.start(1), m.group(1).strip()) for m in _QUOTED.finditer(text))
    found.extend((m.start(), m.group()) for m in _NUMBER.finditer(text))
    return [name for _, name in sorted(found, key=lambda item: item[0]) if entity_key(name)]


def _trigrams(key: str) -> set[str]:
    padded = f"  {key} "
    return {padded[i:i + 3] for i in range(len(padded) - 2)}


def trigram_similarity(a: str, b: str) -> float:
    """Jaccard similarity of the character trigrams of two keys.

    >>> round(trigram_similarity("wiley blackwell", "wiley blackwel"), 2)
    0.82
    """
    ta, tb = _trigrams(a), _trigrams(b)
    return len(ta & tb) / len(ta | tb) if ta and tb else 0.0


@dataclass
class PassageGraphIndex:
    """Passages and entities in one graph, with the PageRank index kept between queries."""

    graph: nx.Graph
    """Nodes ``("p", chunk id)`` and ``("e", entity key)``; edges weighted, ``kind`` mention/title/synonym."""
    passage_entities: dict[str, set[str]]
    """Chunk id -> the entity keys it mentions or is titled by."""
    entity_passages: dict[str, set[str]]
    """Entity key -> the chunks that mention it."""
    title_of_chunk: dict[str, str]
    """Chunk id -> the entity key of its document's title."""
    names: dict[str, str] = field(default_factory=dict)
    """Entity key -> a display form."""
    synonym_edges: int = 0
    _ppr: PageRankIndex | None = None
    _passage_nodes: tuple | None = None
    _prefixes: set[str] | None = None

    @property
    def ppr(self) -> PageRankIndex:
        """The sparse transition matrix, built on first use."""
        if self._ppr is None:
            self._ppr = PageRankIndex(self.graph, weight="weight")
        return self._ppr

    @property
    def prefixes(self) -> set[str]:
        """Every word prefix of every known name, so matching stops as soon as no name can follow."""
        if self._prefixes is None:
            self._prefixes = {" ".join(words[:n]) for words in (k.split() for k in self.entity_passages)
                              for n in range(1, len(words) + 1)}
        return self._prefixes

    @property
    def passage_nodes(self) -> tuple[list[str], "np.ndarray"]:
        """Chunk ids of the passage nodes and their positions in :attr:`ppr`'s index space."""
        if self._passage_nodes is None:
            ppr = self.ppr
            ids = sorted(node[1] for node in ppr.nodelist if node[0] == "p")
            self._passage_nodes = (ids, np.array([ppr.index[("p", i)] for i in ids], dtype=np.int64))
        return self._passage_nodes

    def entities_in(self, text: str, capitalised_only: bool = False) -> list[str]:
        """Known entity keys named in ``text``: longest matches first, no overlapping matches.

        ``capitalised_only`` accepts a match only where the text writes it with a capital or a
        digit, which keeps common-word titles ("Music") from matching ordinary prose.
        """
        tokens = _tokens(text)
        prefixes = self.prefixes
        found: list[str] = []
        i = 0
        while i < len(tokens):
            # Grow the match word by word while it is still the start of a known name.
            best, key = 0, ""
            for n in range(1, len(tokens) - i + 1):
                key = f"{key} {tokens[i + n - 1][0]}" if n > 1 else tokens[i][0]
                if key not in prefixes:
                    break
                if key in self.entity_passages and not (n == 1 and key in _STOP_NAMES):
                    first = text[tokens[i][1]]
                    if not capitalised_only or first.isupper() or first.isdigit():
                        best = n
            if best:
                found.append(" ".join(t[0] for t in tokens[i:i + best]))
                i += best
            else:
                i += 1
        return list(dict.fromkeys(found))

    def stats(self) -> dict:
        passages = sum(1 for node in self.graph if node[0] == "p")
        return {"passages": passages, "entities": self.graph.number_of_nodes() - passages,
                "edges": self.graph.number_of_edges(), "synonym_edges": self.synonym_edges}


def build_passage_graph(
    chunks: Iterable[tuple[str, str, str]],
    titles: Mapping[str, str],
    synonym_threshold: float = 0.8,
    max_entity_passages: int = 200,
    title_link_weight: float = 2.0,
) -> PassageGraphIndex:
    """Build the passage + entity graph.

    Parameters
    ----------
    chunks : iterable of ``(chunk id, document id, text)``
    titles : document id -> title
    synonym_threshold : trigram similarity at or above which two entity names get a synonym
        edge (1.0 or more turns synonyms off).
    max_entity_passages : names found in more passages than this are too common to link
        anything (a year, "United States" in a large corpus) and are left out of the graph.
    title_link_weight : weight of the direct edge from a passage to each passage whose title
        it mentions (0 for none), against 1 for a mention edge: the bridge of a two-hop question.
    """
    chunks = sorted(chunks)
    vocabulary: dict[str, str] = {}
    title_of_chunk: dict[str, str] = {}
    extracted: dict[str, list[str]] = {}
    for chunk_id, document_id, text in chunks:
        title = titles.get(document_id, "")
        if entity_key(title):
            title_of_chunk[chunk_id] = entity_key(title)
            vocabulary.setdefault(entity_key(title), title)
        names = extract_names(text)
        extracted[chunk_id] = [entity_key(n) for n in names]
        for name in names:
            vocabulary.setdefault(entity_key(name), name)
    index = PassageGraphIndex(nx.Graph(), {}, defaultdict(set), title_of_chunk, names=vocabulary)
    index.entity_passages = {key: set() for key in vocabulary}
    for chunk_id, _, text in chunks:
        keys = set(extracted[chunk_id]) | set(index.entities_in(text, capitalised_only=True))
        if chunk_id in title_of_chunk:
            keys.add(title_of_chunk[chunk_id])
        index.passage_entities[chunk_id] = keys
        for key in keys:
            index.entity_passages[key].add(chunk_id)
    common = {key for key, ps in index.entity_passages.items() if len(ps) > max_entity_passages or not ps}
    graph = index.graph
    for chunk_id, _, _ in chunks:
        graph.add_node(("p", chunk_id))
        for key in sorted(index.passage_entities[chunk_id] - common):
            kind = "title" if title_of_chunk.get(chunk_id) == key else "mention"
            graph.add_edge(("p", chunk_id), ("e", key), weight=1.0, kind=kind)
    if title_link_weight > 0:
        titled: dict[str, list[str]] = defaultdict(list)
        for chunk_id, key in sorted(title_of_chunk.items()):
            titled[key].append(chunk_id)
        for chunk_id, _, _ in chunks:
            own = title_of_chunk.get(chunk_id)
            for key in sorted(index.passage_entities[chunk_id] - common):
                if key == own:
                    continue
                for target in titled.get(key, ()):
                    graph.add_edge(("p", chunk_id), ("p", target), weight=title_link_weight, kind="title_link")
    if synonym_threshold < 1.0:
        index.synonym_edges = _add_synonyms(graph, sorted(k for k in vocabulary if k not in common
                                                          and index.entity_passages[k]), synonym_threshold)
    return index


def _add_synonyms(graph: nx.Graph, keys: Sequence[str], threshold: float) -> int:
    """Synonym edges between near-identical names, compared only within a shared first word."""
    by_first: dict[str, list[str]] = defaultdict(list)
    for key in keys:
        by_first[key.split()[0]].append(key)
    added = 0
    for group in by_first.values():
        if len(group) < 2 or len(group) > 300:  # a huge group is a common word, not a name
            continue
        grams = [(_trigrams(k), k) for k in group]
        for i, (ga, a) in enumerate(grams):
            for gb, b in grams[i + 1:]:
                if len(ga & gb) / len(ga | gb) >= threshold:
                    graph.add_edge(("e", a), ("e", b), weight=1.0, kind="synonym")
                    added += 1
    return added


_cache: "weakref.WeakKeyDictionary[object, tuple[tuple, PassageGraphIndex]]" = weakref.WeakKeyDictionary()
_cache_lock = threading.Lock()


def passage_graph_for(ws, synonym_threshold: float = 0.8, max_entity_passages: int = 200,
                      title_link_weight: float = 2.0) -> PassageGraphIndex:
    """The passage graph of workspace ``ws``, rebuilt only when ``ws.version`` or the options change."""
    key = (ws.version, synonym_threshold, max_entity_passages, title_link_weight)
    with _cache_lock:
        cached = _cache.get(ws)
        if cached is not None and cached[0] == key:
            return cached[1]
        titles = {d.id: d.title for d in ws.store.documents()}
        chunks = [(c.id, c.document_id, c.text) for c in ws.store.chunks()]
        index = build_passage_graph(chunks, titles, synonym_threshold, max_entity_passages, title_link_weight)
        _cache[ws] = (key, index)
        return index
