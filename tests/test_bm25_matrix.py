"""The BM25 score matrix (workbench.corpus.bm25_matrix) is bm25s's own to the bit, and a keyword
index built from a kept one (its occurrences updated with the changed passages alone, no passage
tokenized again, no sort of every pair) equals a fresh build array by array: the passages, the
scores and passages of every word's column, and the vocabulary, after passages are added, changed
and removed."""

from __future__ import annotations

import random

import bm25s
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.corpus.bm25_matrix import METHODS, Occurrences, bm25_scores
from workbench.corpus.keyword_index import KeywordIndex

WORDS = "redis postgres kafka 缓存 雪崩 token auth service gateway timeout ERR42 file_9.py queue the".split()


@pytest.mark.parametrize("method", METHODS)
def test_the_matrix_is_the_one_bm25s_makes_to_the_bit(method):
    rng = random.Random(7)
    rows = [[rng.randrange(40) for _ in range(rng.choice([0, 1, 5, 30]))] for _ in range(300)]
    vocabulary = {str(i): i for i in range(45)}  # five words no passage holds
    index = bm25s.BM25(method=method)
    index.index((rows, dict(vocabulary)), show_progress=False)
    made = bm25_scores(np.array([t for r in rows for t in r]), np.cumsum([0] + [len(r) for r in rows]), 45,
                       index.k1, index.b, method)
    assert len(made["data"]) == len(index.scores["data"]) > 1000
    for name in ("data", "indices", "indptr"):
        assert made[name].dtype == index.scores[name].dtype and np.array_equal(made[name], index.scores[name]), name


def _columns(index: KeywordIndex, words: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The index's score matrix with its columns in the order of ``words``: data, passages, and
    each column's length (a word past the matrix's last column has none)."""
    scores, vocabulary = index._bm25.scores, index._bm25.vocab_dict
    indptr = scores["indptr"]
    spans = [(int(indptr[t]), int(indptr[t + 1])) if t + 1 < len(indptr) else (0, 0)
             for t in (vocabulary[w] for w in words)]
    return (np.concatenate([scores["data"][lo:hi] for lo, hi in spans]),
            np.concatenate([scores["indices"][lo:hi] for lo, hi in spans]),
            np.array([hi - lo for lo, hi in spans]))


def assert_as_built_afresh(kept: KeywordIndex, ids: list[str], texts: list[str]) -> None:
    """``kept`` equals a fresh build of ``ids``, ``texts`` array by array, and its own vocabulary's
    matrix made from its tokens. Term ids differ from a fresh build's (the kept vocabulary keeps
    the words of removed passages, and numbers words in the order they came): the columns are
    compared word by word, in the fresh vocabulary's order."""
    fresh = KeywordIndex.build(ids, texts)
    assert kept._ids == fresh._ids
    kept_words, fresh_words = kept._bm25.vocab_dict, fresh._bm25.vocab_dict
    assert fresh_words.keys() <= kept_words.keys()
    ordered = sorted(fresh_words, key=fresh_words.__getitem__)
    for made, expected in zip(_columns(kept, ordered), _columns(fresh, ordered)):
        assert made.dtype == expected.dtype and np.array_equal(made, expected)
    gone = [w for w in kept_words if w not in fresh_words]  # words of removed passages alone: no entry
    assert not gone or not _columns(kept, gone)[2].any()
    assert kept._bm25.scores["num_docs"] == fresh._bm25.scores["num_docs"] == len(ids)
    # The kept vocabulary's matrix, made again from every passage's tokens, is the one kept.
    remade = Occurrences.of(kept._tokens[0], kept._tokens[1], len(kept._bm25.scores["indptr"]) - 1)
    assert remade == kept._occurrences
    again = remade.scores(kept._bm25.k1, kept._bm25.b)
    for name in ("data", "indices", "indptr"):
        assert np.array_equal(again[name], kept._bm25.scores[name]), name


class Passages:
    """Passages by id, changed as a record's chunks are (a changed text takes a new id)."""

    def __init__(self, seed: int, count: int) -> None:
        self.rng = random.Random(seed)
        self.made = 0
        self.texts: dict[str, str] = {}
        for _ in range(count):
            self.add()

    def text(self) -> str:
        words = [self.rng.choice(WORDS) for _ in range(self.rng.choice([0, 1, 3, 12, 40]))]
        if self.rng.random() < 0.5:  # a word no other passage holds: the vocabulary grows
            words.append(f"only{self.made}")
        return " ".join(words)

    def add(self) -> None:
        self.made += 1
        self.texts[f"p{self.rng.randrange(10 ** 6):06d}-{self.made}"] = self.text()

    def remove(self) -> None:
        if self.texts:
            del self.texts[self.rng.choice(sorted(self.texts))]

    def change(self) -> None:
        if self.texts:
            self.remove()
            self.add()

    def sorted(self) -> tuple[list[str], list[str]]:
        ids = sorted(self.texts)
        return ids, [self.texts[i] for i in ids]


def test_an_index_built_from_a_kept_one_after_adds_changes_and_removals_equals_a_fresh_build(monkeypatch):
    passages = Passages(1, 300)
    index = KeywordIndex.build(*passages.sorted())
    of = Occurrences.of.__func__  # type: ignore[attr-defined]
    made_afresh = []

    def counted(cls, tokens, starts, vocabulary):
        made_afresh.append(len(starts) - 1)
        return of(cls, tokens, starts, vocabulary)

    steps = [(passages.add,) * 5, (passages.change,) * 3, (passages.remove,) * 10,
             (passages.add, passages.change, passages.remove, passages.remove), (passages.add,)]
    for step in steps:
        for change in step:
            change()
        ids, texts = passages.sorted()
        monkeypatch.setattr(Occurrences, "of", classmethod(counted))
        index = KeywordIndex.build(ids, texts, earlier=index)
        monkeypatch.undo()
        assert_as_built_afresh(index, ids, texts)
    assert made_afresh == []  # each one updated from the kept occurrences, none made from every token


def test_passages_given_in_another_order_are_scored_as_a_fresh_build():
    passages = Passages(2, 120)
    earlier = KeywordIndex.build(*passages.sorted())
    passages.add()
    passages.remove()
    ids, texts = passages.sorted()
    ids, texts = ids[::-1], texts[::-1]  # the kept passages' order turned around: made from the tokens
    assert_as_built_afresh(KeywordIndex.build(ids, texts, earlier=earlier), ids, texts)


def test_a_loaded_index_lends_its_tokens_and_the_next_build_keeps_occurrences(tmp_path):
    passages = Passages(3, 80)
    KeywordIndex.build(*passages.sorted()).save(tmp_path / "k.npz", "ws:1")
    loaded = KeywordIndex.load(tmp_path / "k.npz", "ws:1")
    assert loaded._occurrences is None
    passages.change()
    ids, texts = passages.sorted()
    built = KeywordIndex.build(ids, texts, earlier=loaded)
    assert_as_built_afresh(built, ids, texts)
    passages.add()
    ids, texts = passages.sorted()
    assert_as_built_afresh(KeywordIndex.build(ids, texts, earlier=built), ids, texts)


def test_the_earlier_index_a_reader_holds_is_left_as_it_was():
    passages = Passages(4, 60)
    earlier = KeywordIndex.build(*passages.sorted())
    before = earlier.search("redis only3 timeout", 20)
    words, scores = dict(earlier._bm25.vocab_dict), {n: a.copy() for n, a in earlier._bm25.scores.items() if n != "num_docs"}
    for _ in range(3):
        passages.add()
    passages.remove()
    KeywordIndex.build(*passages.sorted(), earlier=earlier)
    assert earlier._bm25.vocab_dict == words and earlier.search("redis only3 timeout", 20) == before
    assert all(np.array_equal(earlier._bm25.scores[n], a) for n, a in scores.items())


def test_kept_passages_out_of_their_order_are_refused_by_an_update():
    kept = Occurrences.of(np.array([0, 1, 1, 2]), np.array([0, 2, 4]), 3)
    with pytest.raises(ValueError, match="keep their order"):
        kept.updated(np.array([1, 0]), np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64), 3)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10 ** 6), st.lists(st.lists(st.sampled_from(["add", "change", "remove"]), max_size=6),
                                         min_size=1, max_size=5))
def test_any_sequence_of_writes_keeps_the_index_a_fresh_build_makes(seed, writes):
    passages = Passages(seed, 30)
    index = KeywordIndex.build(*passages.sorted())
    for write in writes:
        for change in write:
            getattr(passages, change)()
        ids, texts = passages.sorted()
        index = KeywordIndex.build(ids, texts, earlier=index)
        if index._bm25 is None:  # no passage holds a word
            assert KeywordIndex.build(ids, texts)._bm25 is None
        else:
            assert_as_built_afresh(index, ids, texts)
