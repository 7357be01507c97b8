"""The precision of the `name` type on a labelled sample (tests/data/name_labels.tsv), and the
rules that keep sentence-initial words, interjections and calendar words from becoming names."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT, SAMPLE
from workbench.ingest.chunking import chunk_document
from workbench.extract.names import NameExtractor, extract_names
from workbench.ingest.loaders import load_paths

LABELS = ROOT / "tests" / "data" / "name_labels.tsv"
CORPORA = (SAMPLE, ROOT / "tests" / "data" / "research_corpus", ROOT / "tests" / "data" / "names_corpus")


def labelled() -> dict[str, bool]:
    """Surface form -> whether it is a name, from the labelled sample."""
    rows = [line.split("\t") for line in LABELS.read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#")]
    return {surface: label == "name" for surface, label, _ in rows}


def extracted_names(corpora=CORPORA) -> set[str]:
    """Every distinct surface form the names extractor types `name` on the corpora."""
    found = set()
    extractor = NameExtractor()
    for root in corpora:
        for document in load_paths([Path(root)]).documents:
            mentions = extractor.extract(document, chunk_document(document)).mentions
            found |= {m.surface for m in mentions if m.entity_type == "name"}
    return found


def test_name_precision_on_the_labelled_sample_is_at_least_0_9():
    labels = labelled()
    assert len(labels) >= 200 and sum(labels.values()) >= 100
    found = extracted_names()
    unlabelled = sorted(found - labels.keys())
    assert not unlabelled, f"label these in {LABELS.name}: {unlabelled}"
    correct = sum(labels[name] for name in found)
    precision = correct / len(found)
    print(f"name precision: {correct}/{len(found)} = {precision:.3f}")
    assert len(found) >= 100 and precision >= 0.9


@pytest.mark.parametrize("text, not_names", [
    ("None of the keys expired, said Mara Chen. Any client may retry. Only the cache failed.", {"None", "Any", "Only"}),
    ("OK, go for the rollback. Yes. Thanks, that helped Mara Chen. Sure thing.", {"OK", "Yes", "Thanks", "Sure"}),
    ("Monday's change hit Mara Chen. Every Tuesday the strings rehearse; on Wednesdays all meet.",
     {"Monday's", "Monday", "Tuesday", "Every Tuesday", "Wednesdays"}),
    ("Otters were seen at Millbrook. Nevertheless the trust was pleased.", {"Otters", "Nevertheless"}),
])
def test_sentence_openers_interjections_and_calendar_words_are_not_names(text, not_names):
    names = {name for name, kind in extract_names(text) if kind == "name"}
    assert not names & not_names and names in ({"Mara Chen"}, {"Millbrook"})


def test_a_sentence_opening_word_is_a_name_when_the_text_capitalises_it_elsewhere():
    text = "Dr. Sarah Chen led the study. Chen concluded that a larger trial was needed."
    assert [n for n, kind in extract_names(text) if kind == "name"] == ["Sarah Chen", "Chen"]
    # A word the text also writes in lower case is a common word, wherever it is capitalised.
    assert extract_names("Patients wait. The Patients Forum met. Most patients agreed.") == [("Patients Forum", "name")]


def test_a_role_before_a_name_and_a_wrapped_line_do_not_change_the_name():
    text = ("After three years of repairs the museum reopened, and Mayor Aoife Brennan wrote to the Environment\n"
            "Agency about the harbour wall.\n# Harbour Museum\nVisitors came.")
    names = [n for n, kind in extract_names(text) if kind == "name"]
    assert names == ["Aoife Brennan", "Environment Agency", "Harbour Museum"]


@pytest.mark.parametrize("text, names", [
    ("The server room was at 25°C on Monday, said Mara Chen.", ["Mara Chen"]),
    ("Water boils at 100 °C and 212°F; the probe read 25 C.", []),
    ("It ran at 3.5 GHz Intel Xeon with 16 GB of RAM.", ["Intel Xeon", "RAM"]),
    ("Grade A students and Plan B met Vitamin C.", ["Grade A", "Plan B", "Vitamin C"]),
])
def test_a_unit_written_after_a_number_is_a_measure_not_a_name(text, names):
    assert [n for n, kind in extract_names(text) if kind == "name"] == names


@pytest.mark.parametrize("text, dates", [
    ("Review 53050: 100000 rows moved in 2023, as in 1066 and 2150.", ["2023", "1066", "2150"]),
    ("Ticket 4711 of 9999 and port 0800 stayed; it was 12 May 2024.", ["12 May 2024"]),
    ("March 3, 1999 and 1999-2001 and v2024 and 2024x", ["March 3, 1999"]),
])
def test_a_bare_number_is_a_date_only_as_a_plausible_year(text, dates):
    assert [n for n, kind in extract_names(text) if kind == "date"] == dates
