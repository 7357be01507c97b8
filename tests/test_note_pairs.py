"""The SIMILAR_TO candidates decided again for only the titles a write touched
(:func:`workbench.corpus.note_pairs.rekeep`) are those the greedy pass over every pair keeps
(:func:`~workbench.corpus.note_pairs.keep_best`)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.corpus.note_pairs import CandidateRow, keep_best, rekeep


class Book:
    """The pairs now and the pairs kept before, held in dicts; counts the titles read."""

    def __init__(self, now, kept_before):
        self.now, self.before, self.read = now, kept_before, set()

    def pairs_of(self, title):
        self.read.add(title)
        return {p: r for p, r in self.now.items() if title in (r.subject, r.object)}

    def kept_before(self, title):
        return {p: r for p, r in self.before.items() if title in (r.subject, r.object)}


def _pairs(rng, titles, notes: int, count: int, levels: int):
    """``count`` random pairs of ``notes`` notes, with few similarity levels so that ties of
    confidence (then broken by title, then id) are common."""
    found = {}
    for _ in range(count):
        a, b = sorted(rng.choice(notes, size=2, replace=False).tolist())
        pair = (f"n{a:02d}", f"n{b:02d}")
        found[pair] = CandidateRow(titles[pair[0]], titles[pair[1]], float(rng.integers(1, levels + 1)) / levels)
    return found


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 3), st.sampled_from([2, 5, 1000]))
def test_rekeep_keeps_what_the_whole_pass_keeps_after_any_write(seed, cap, levels):
    rng = np.random.default_rng(seed)
    notes = int(rng.integers(4, 30))
    titles = {f"n{i:02d}": f"T{int(rng.integers(0, notes))}" for i in range(notes)}  # some titles shared
    old = _pairs(rng, titles, notes, int(rng.integers(0, 60)), levels)
    kept_before = keep_best(old, cap)
    # A write: some notes change (their pairs go; some come back under a new title and confidence),
    # some pairs of unchanged notes go or come.
    changed = {f"n{i:02d}" for i in rng.choice(notes, size=int(rng.integers(0, 4)), replace=False).tolist()}
    titles_now = {**titles, **{note: f"T{int(rng.integers(0, notes))}" for note in changed}}
    new = {p: r for p, r in old.items() if not changed & set(p) and rng.random() > 0.1}
    for pair, row in _pairs(rng, titles_now, notes, int(rng.integers(0, 12)), levels).items():
        if changed & set(pair) or pair not in old:
            new[pair] = row
    gone = {p: r for p, r in kept_before.items() if new.get(p) != r}
    added = {p: r for p, r in new.items() if old.get(p) != r}
    touched = {t for r in gone.values() for t in (r.subject, r.object)} | {r.subject for r in added.values()}

    book = Book(new, kept_before)
    before, now = rekeep(book, touched, cap)
    result = {p: r for p, r in kept_before.items() if not (p in before and now.get(p) != r)}
    result.update(now)
    assert result == keep_best(new, cap)
    assert all(before[p] == r for p, r in kept_before.items() if p in before)  # before: as they were kept


def test_a_write_below_the_cap_reads_only_the_titles_of_its_pairs():
    rows = {(f"a{i}", f"b{i}"): CandidateRow(f"A{i}", f"B{i}", 0.9) for i in range(50)}  # 50 separate pairs
    kept = keep_best(rows, 3)
    added = {("a0", "c0"): CandidateRow("A0", "C0", 0.8)}
    book = Book({**rows, **added}, kept)
    before, now = rekeep(book, ["A0"], 3)
    assert now == {("a0", "b0"): rows[("a0", "b0")], **added} and set(before) == {("a0", "b0")}
    assert book.read == {"A0", "C0"}  # the titles of the new kept pair, none of the 49 other pairs'



def test_a_pair_dropped_at_the_cap_frees_the_next_pair_of_its_other_title():
    # cap 1: A-B (0.9) is kept, so B-C (0.8) is not, so C-D (0.7) is. A-B going keeps B-C, and
    # so drops C-D: the chain runs through B, C and D though only A and B were touched.
    rows = {("a", "b"): CandidateRow("A", "B", 0.9), ("b", "c"): CandidateRow("B", "C", 0.8),
            ("c", "d"): CandidateRow("C", "D", 0.7)}
    kept = keep_best(rows, 1)
    assert set(kept) == {("a", "b"), ("c", "d")}
    book = Book({p: r for p, r in rows.items() if p != ("a", "b")}, kept)
    before, now = rekeep(book, ["A", "B"], 1)
    assert set(now) == {("b", "c")} and set(before) == {("a", "b"), ("c", "d")}
    assert book.read == {"A", "B", "C", "D"}
