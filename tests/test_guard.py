"""The ``any_of`` guard: the same answer as the case-insensitive regex it stands for, on any text."""

import re

from hypothesis import given
from hypothesis import strategies as st

from workbench.extract.guard import Guard
from workbench.extract.patterns import RelationPatternExtractor
from workbench.model import Chunk, Document
from workbench.settings import ExtractionSettings, RelationPattern

# Letters of the words, their capitals, and the characters where str.lower and the regex part.
_ALPHABET = st.sampled_from(list("apiSERVICteam: ") + ["\u0130", "\u0131", "\u017f", "\u212a", "\u00e9", "\u00df"])


@given(words=st.lists(st.text(_ALPHABET, min_size=1, max_size=4), min_size=1, max_size=3),
       text=st.text(_ALPHABET, max_size=40))
def test_guard_admits_exactly_what_the_case_insensitive_regex_finds(words, text):
    regex = re.compile("|".join(map(re.escape, words)), re.IGNORECASE)
    assert Guard(words).admits(text) is (regex.search(text) is not None)


def test_guard_of_ascii_words_finds_them_beside_the_characters_lower_gets_wrong():
    assert Guard(["is"]).admits("TH\u0130S")  # "İ" lowers to two characters
    assert Guard(["st"]).admits("be\u017ft")  # long s
    assert not Guard(["api"]).admits("no match here")


def _edges(extractor, text):
    document = Document("doc.md", "/tmp/doc.md", "Doc", "text", text, "hash")
    found = extractor.extract(document, [Chunk("c1", "doc.md", 0, text, 0, len(text))])
    return [(t.subject, t.relation, t.object) for t in found.triples]


def test_relation_regex_runs_only_on_chunks_its_guard_admits():
    regex = r"(?P<subject>\w+) guards (?P<object>\w+)"
    guarded = RelationPatternExtractor([RelationPattern(relation="guards", regex=regex, any_of=["gate"])], 1.0)
    unguarded = RelationPatternExtractor([RelationPattern(relation="guards", regex=regex)], 1.0)
    assert _edges(unguarded, "Alice guards Bob.") == [("Alice", "guards", "Bob")]
    assert _edges(guarded, "Alice guards Bob.") == []
    assert _edges(guarded, "At the Gate, Alice guards Bob.") == [("Alice", "guards", "Bob")]


def test_the_default_team_lead_regex_still_finds_its_lead():
    extractor = RelationPatternExtractor(ExtractionSettings().relations, 1.0)
    assert ("@mara.chen", "leads", "Platform team") in _edges(extractor, "Platform team: @mara.chen leads the team.")


def test_a_relation_guard_does_not_change_the_fingerprint_but_its_regex_does():
    from workbench.workspace.ingest_pipeline import pipeline_fingerprint
    from workbench.settings import Settings

    settings = Settings()
    unguarded = settings.model_copy(deep=True)
    for pattern in unguarded.extraction.relations:
        pattern.any_of = []
    changed = settings.model_copy(deep=True)
    changed.extraction.relations[-1].regex = r"(?P<subject>\w+) leads (?P<object>\w+)"
    assert pipeline_fingerprint(unguarded) == pipeline_fingerprint(settings) != pipeline_fingerprint(changed)
