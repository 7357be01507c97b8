"""Synonym pairs are compared again only where a name changed, and always equal a full comparison."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.context_graph import synonyms as synonyms_module
from workbench.context_graph.name_scan import FILE_NAME, load_name_scan, save_name_scan
from workbench.context_graph.passages import NameScan, link_passages
from workbench.context_graph.synonyms import GROUP_LIMIT, first_word_groups, synonym_scan, synonyms_changed

WORDS = ["Wiley", "Blackwell", "Blackwel", "Ann", "Anne", "Lee", "Lees", "Oslo", "Bank", "of", "the", "X-Ray"]

names = st.dictionaries(st.sampled_from([f"k{i}" for i in range(14)]),
                        st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join), max_size=14)


@settings(max_examples=300, deadline=None)
@given(before=names, after=names, threshold=st.sampled_from([0.3, 0.5, 0.8]))
def test_a_comparison_made_with_the_last_one_equals_a_full_comparison(before, after, threshold):
    reused = synonym_scan(after, threshold, previous=synonym_scan(before, threshold))
    full = synonym_scan(after, threshold)
    assert reused == full
    assert list(full.pairs) == every_pair_compared(after, threshold)


def every_pair_compared(names: dict[str, str], threshold: float) -> list[tuple[str, str, float]]:
    """The pairs by brute force: every two names of one first word, no bound on sizes to stop early."""
    def trigrams(words: str) -> set[str]:
        padded = f"  {words} "
        return {padded[i:i + 3] for i in range(len(padded) - 2)}

    words = {key: " ".join(name.replace("-", " ").casefold().split()) for key, name in names.items()}
    groups: dict[str, list[str]] = {}
    for key, text in words.items():
        if text:
            groups.setdefault(text.split(" ")[0], []).append(key)
    pairs = []
    for keys in groups.values():
        if len(keys) > GROUP_LIMIT:
            continue
        for i, a in enumerate(keys):
            for b in keys[i + 1:]:
                ga, gb = trigrams(words[a]), trigrams(words[b])
                similarity = len(ga & gb) / len(ga | gb)
                if similarity >= threshold:
                    pairs.append((min(a, b), max(a, b), round(similarity, 3)))
    return sorted(pairs)


def test_a_new_name_splits_only_itself_and_compares_only_its_group(monkeypatch):
    before = {"wileyblackwell": "Wiley-Blackwell", "annlee": "Ann Lee", "annlees": "Ann Lees", "oslo": "Oslo"}
    first = synonym_scan(before, 0.6)
    assert [pair[:2] for pair in first.pairs] == [("annlee", "annlees")]
    split, compared = [], []
    real_words, real_group = synonyms_module._words, synonyms_module._group_pairs
    monkeypatch.setattr(synonyms_module, "_words", lambda name: split.append(name) or real_words(name))
    monkeypatch.setattr(synonyms_module, "_group_pairs",
                        lambda group, t: compared.append(sorted(k for k, _ in group)) or real_group(group, t))
    after = {**before, "wileyblackwel": "Wiley Blackwel"}
    again = synonym_scan(after, 0.6, previous=first)
    assert split == ["Wiley Blackwel"]
    assert compared == [["wileyblackwel", "wileyblackwell"]]
    assert [pair[:2] for pair in again.pairs] == [("annlee", "annlees"), ("wileyblackwel", "wileyblackwell")]


def test_a_renamed_or_removed_name_drops_its_pairs():
    first = synonym_scan({"a": "Ann Lee", "b": "Ann Lees", "c": "Oslo"}, 0.6)
    assert synonym_scan({"a": "Ann Lee", "b": "Bergen", "c": "Oslo"}, 0.6, previous=first).pairs == ()
    assert synonym_scan({"a": "Ann Lee", "c": "Oslo"}, 0.6, previous=first).pairs == ()


def test_a_comparison_at_another_threshold_is_not_reused():
    first = synonym_scan({"a": "Ann Lee", "b": "Ann Lees"}, 0.9)
    assert first.pairs == ()
    assert synonym_scan({"a": "Ann Lee", "b": "Ann Lees"}, 0.6, previous=first).pairs == (("a", "b", 0.7),)


def test_a_group_past_the_limit_is_a_common_word_and_not_compared():
    crowd = {f"k{i}": f"The Name{i:04d}" for i in range(GROUP_LIMIT + 1)}
    assert synonym_scan(crowd, 0.5).pairs == ()
    fewer = dict(list(crowd.items())[:GROUP_LIMIT])
    assert synonym_scan(fewer, 0.5, previous=synonym_scan(crowd, 0.5)) == synonym_scan(fewer, 0.5)
    assert synonym_scan(fewer, 0.5).pairs  # at the limit they are compared


def test_the_kept_comparison_is_saved_with_the_name_scan_and_a_damaged_one_is_ignored(tmp_path):
    chunks = [("c1", "Ann Lee and Ann Lees met in Oslo.")]
    forms = {"annlee": ["Ann Lee"], "annlees": ["Ann Lees"], "oslo": ["Oslo"]}
    layer = link_passages(chunks, {}, forms, {}, synonym_threshold=0.6)
    assert layer.synonyms == (("annlee", "annlees", 0.7),)
    save_name_scan(tmp_path, layer.scan)
    loaded = load_name_scan(tmp_path)
    assert loaded.synonyms == layer.scan.synonyms
    again = link_passages(chunks, {}, forms, {}, synonym_threshold=0.6, previous=loaded)
    assert again.synonyms == layer.synonyms


@pytest.mark.parametrize("damage", [
    lambda columns: columns.update(words=columns["words"][:-1]),
    lambda columns: columns.update(pairs=[["annlee", "nobody", 0.9]]),
    lambda columns: columns.update(threshold="0.6"),
])
def test_synonym_columns_that_do_not_fit_make_the_scan_unusable(tmp_path, monkeypatch, damage):
    from workbench.context_graph import name_scan

    scan = NameScan({"ann lee": "annlee"}, {"c1": ("annlee",)},
                    synonym_scan({"annlee": "Ann Lee", "annlees": "Ann Lees"}, 0.6))
    columns = name_scan._synonym_columns(scan.synonyms)
    columns["pairs"] = [list(pair) for pair in columns["pairs"]]
    damage(columns)
    monkeypatch.setattr(name_scan, "_synonym_columns", lambda _: columns)
    save_name_scan(tmp_path, scan)
    assert (tmp_path / FILE_NAME).exists() and load_name_scan(tmp_path) is None


@settings(max_examples=300, deadline=None)
@given(before=names, after=names, threshold=st.sampled_from([0.3, 0.5, 0.8]), limit=st.sampled_from([2, 3, 300]))
def test_names_changed_compare_again_with_their_group_alone_and_equal_a_full_comparison(before, after, threshold,
                                                                                       limit):
    # a small limit makes groups cross it both ways: their pairs go, or are compared whole
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(synonyms_module, "GROUP_LIMIT", limit)
        first = synonym_scan(before, threshold)
        groups = first_word_groups(first.words)
        changes = {key: after.get(key) for key in before.keys() | after.keys()}
        followed = synonyms_changed(first, changes, groups)
        full = synonym_scan(after, threshold)
        assert followed == full
        assert groups == first_word_groups(full.words)


def test_a_group_back_under_the_limit_compares_its_unchanged_names_again(monkeypatch):
    monkeypatch.setattr(synonyms_module, "GROUP_LIMIT", 2)
    first = synonym_scan({"a": "Ann Lee", "b": "Ann Lees", "c": "Ann Bo"}, 0.6)
    assert first.pairs == ()  # three names of one first word: past the limit, not compared
    followed = synonyms_changed(first, {"c": None}, first_word_groups(first.words))
    assert followed.pairs == (("a", "b", 0.7),) == synonym_scan({"a": "Ann Lee", "b": "Ann Lees"}, 0.6).pairs
