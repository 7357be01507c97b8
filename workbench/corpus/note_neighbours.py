"""Each note's nearest notes, kept in the record and updated by what a write changed.

The ``SIMILAR_TO`` candidates between notes come from each note's :data:`NEAREST_NOTES` most
similar notes (:func:`~workbench.extract.notes.similar_note_candidates` finds them for a whole
corpus at once). Doing that again at every write cost an ingest of one note into a vault of
20,000 a full pass over every note's chunks and a product of every note with every other.
Here the record keeps, beside the documents:

- ``note_vectors``: each note's mean chunk vector (float32), the content hash it was made from,
  and the note's first chunk (the one a candidate cites);
- ``note_neighbours``: each note's nearest notes above the threshold (at most ``k``), with the
  float32 similarity they were ranked by.

A write then touches only what changed. Notes removed or changed leave every list they were in;
a list that was full (``k`` entries) and lost one is computed again, since its next neighbour is
not known. Notes added or changed get their own list from one row of products against every
note, and enter the lists of the notes they are near. The candidates are then read from the
lists exactly as the whole-corpus search gives them: a pair of notes at least ``threshold``
similar, one of which has the other among its ``k`` nearest, then at most
``max_per_note`` candidates a note, best pairs first (tested equal to the whole-corpus search
after random sequences of additions, changes and removals).

The lists are kept for one embedder, threshold and ``k`` (the meta key
:data:`NEIGHBOURS_KEY`); when any of them changes, every list is made again. Everything a
refresh writes (vectors, lists, candidates and that key) is one transaction, so a refresh that
fails leaves the record as it was and the next one finds the same work to do.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..extract.notes import BLOCK_ELEMENTS, NEAREST_NOTES, SLACK, unit_rows
from ..model import Triple
from ..record.store import Store
from ..record.note_rows import NOTE_NEIGHBOURS_KEY as NEIGHBOURS_KEY

__all__ = ["NEIGHBOURS_KEY", "NeighbourRefresh", "refresh_note_neighbours", "best_per_note", "nearest_in_rows"]

_FORMAT = 1
#: Chunks (and their vectors) read at once while averaging the notes' vectors.
MEAN_PAGE_CHUNKS = 1000
#: Note pairs whose exact cosine is computed at once: small enough that their two gathered rows
#: stay in the CPU cache for the products (larger slices were slower, with the same cosines).
PAIRS_AT_ONCE = 1024

VectorsOf = Callable[[Sequence[str]], np.ndarray]
"""``vectors_of(texts)``: the chunk vectors of ``texts`` (float32 rows), cached or computed."""


@dataclass
class NeighbourRefresh:
    """What one refresh did: the candidates it stored and how much it had to compute."""

    candidates: list[Triple] | None
    """The candidates stored; None when no note changed (the stored ones stand)."""
    notes: int
    """Notes in the record."""
    embedded: int
    """Notes whose mean vector was made (added, changed, or every note after a key change)."""
    rows: int
    """Notes whose nearest-note list was computed against every note."""
    full: bool
    """Whether every list was made again (no lists yet, or another embedder, threshold or k)."""


def refresh_note_neighbours(store: Store, vectors_of: VectorsOf, space: str, threshold: float,
                            kinds: Sequence[str], max_per_note: int, k: int = NEAREST_NOTES,
                            full: bool = False) -> NeighbourRefresh:
    """Bring the stored neighbour lists and the ``SIMILAR_TO`` candidates up to date with the
    notes (documents of ``kinds``) in the record; ``full`` makes every list again.

    ``space`` names the embedder whose vectors ``vectors_of`` gives; ``threshold`` and ``k``
    are those of :func:`~workbench.extract.notes.similar_note_candidates`.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    key = json.dumps([_FORMAT, space, repr(float(threshold)), k, sorted(kinds)])
    notes = store.notes.note_documents(kinds)  # id -> (title, content hash)
    full = full or store.meta(NEIGHBOURS_KEY) != key
    stored = {} if full else store.notes.note_vector_hashes()
    gone = {i for i, digest in stored.items() if i not in notes or notes[i][1] != digest}
    fresh = sorted(i for i, (_, digest) in notes.items() if stored.get(i) != digest)
    if not (full or gone or fresh):
        return NeighbourRefresh(None, len(notes), 0, 0, False)

    lists = {} if full else store.notes.note_neighbour_lists()
    dirty: set[str] = set()  # notes whose list is written again
    refill: set[str] = set()  # notes whose list is computed again against every note
    valid = stored.keys() - gone  # notes whose stored vector stands (a list never names another)
    for note in list(lists):
        if note not in valid:
            del lists[note]
            continue
        kept = [(other, s) for other, s in lists[note] if other in valid]
        if len(kept) < len(lists[note]):
            dirty.add(note)
            if len(lists[note]) >= k:
                refill.add(note)  # its next nearest note is not known
            lists[note] = kept

    made = _mean_vectors(store, vectors_of, fresh)
    ids, means, firsts = ([], np.zeros((0, 0)), {}) if full else store.notes.note_vectors(exclude=gone | set(made))
    if made:
        ids += list(made)
        firsts.update({note: first for note, (first, _) in made.items()})
        means = np.vstack([*([means] if len(means) else []), *[mean for _, mean in made.values()]])
    order = sorted(range(len(ids)), key=ids.__getitem__)
    ids = [ids[i] for i in order]
    position = {note: n for n, note in enumerate(ids)}
    unit = unit_rows(np.asarray(means, dtype=np.float64)[order]) if ids else np.zeros((0, 1))
    unit32 = unit.astype(np.float32)
    floor = float(np.float32(threshold - SLACK))

    computed = sorted(position[i] for i in (set(made) | refill))
    for row, (cols, sims) in nearest_in_rows(unit32, computed, k, floor).items():
        lists[ids[row]] = [(ids[c], s) for c, s in zip(cols, sims)]
        dirty.add(ids[row])
    entering = sorted(position[i] for i in made)
    for row, other, similarity in entries_beyond(unit32, entering, computed, floor):
        note, entry = ids[other], (ids[row], similarity)  # a new or changed note enters a list it is near
        entries = lists.get(note, [])
        if len(entries) >= k and _rank(entry) > _rank(entries[-1]):
            continue
        lists[note] = sorted([*entries, entry], key=_rank)[:k]
        dirty.add(note)

    titles = {note: notes[note][0] for note in ids}
    candidates = candidate_triples(lists, position, unit, threshold, titles, firsts, max_per_note)
    store.notes.write_note_neighbours(
        key, full, removed=sorted(gone),
        vectors=[(note, notes[note][1], first, mean) for note, (first, mean) in made.items()],
        lists={note: lists.get(note, []) for note in sorted(dirty)}, candidates=candidates)
    return NeighbourRefresh(candidates, len(notes), len(made), len(computed), full)


def _rank(entry: tuple[str, float]) -> tuple[float, str]:
    """A list's order: most similar first, then by note id (as the whole-corpus search breaks ties)."""
    return -entry[1], entry[0]


def nearest_in_rows(unit32: np.ndarray, rows: Sequence[int], k: int,
                    floor: float) -> dict[int, tuple[list[int], list[float]]]:
    """For each row index in ``rows``, its at most ``k`` most similar other rows of ``unit32``
    (unit vectors) at or above ``floor``: ``row -> (columns, similarities)``, best first, ties
    by column. Computed a block of rows at a time (about :data:`BLOCK_ELEMENTS` similarities).

    Examples
    --------
    >>> unit = np.array([[1, 0], [0.8, 0.6], [0, 1]], dtype=np.float32)
    >>> found = nearest_in_rows(unit, [0, 2], k=1, floor=0.5)
    >>> found[0][0], found[2][0]
    ([1], [1])
    """
    n = len(unit32)
    out: dict[int, tuple[list[int], list[float]]] = {}
    if not rows or n < 2:
        return {row: ([], []) for row in rows}
    step = max(1, min(1024, BLOCK_ELEMENTS // n))
    best = min(k, n - 1)
    for lo in range(0, len(rows), step):
        part = np.asarray(rows[lo:lo + step])
        block = unit32[part] @ unit32.T
        block[np.arange(len(part)), part] = -np.inf  # not a note's own neighbour
        top = np.argpartition(-block, best - 1, axis=1)[:, :best] if best < n else np.argsort(-block, axis=1)
        for i, row in enumerate(part.tolist()):
            cols = top[i][block[i, top[i]] >= floor]
            sims = block[i, cols]
            keep = np.lexsort((cols, -sims))
            out[row] = (cols[keep].tolist(), sims[keep].tolist())
    return out


def entries_beyond(unit32: np.ndarray, rows: Sequence[int], computed: Sequence[int],
                   floor: float) -> list[tuple[int, int, float]]:
    """``(row, other, similarity)`` for each row of ``rows`` and each other row not in
    ``computed`` at least ``floor`` similar to it (float32, as the lists are ranked), a block of
    rows at a time. When every row was computed there is nothing to enter (a first ingest).

    Examples
    --------
    >>> unit = np.array([[1, 0], [0.8, 0.6], [0, 1]], dtype=np.float32)
    >>> [(r, o) for r, o, _ in entries_beyond(unit, [0], [0], 0.5)]
    [(0, 1)]
    """
    n = len(unit32)
    if not rows or len(computed) >= n:
        return []
    outside = np.ones(n, dtype=bool)
    outside[list(computed)] = False
    columns = np.flatnonzero(outside)
    step = max(1, min(1024, BLOCK_ELEMENTS // len(columns)))
    found: list[tuple[int, int, float]] = []
    for lo in range(0, len(rows), step):
        part = np.asarray(rows[lo:lo + step])
        block = unit32[part] @ unit32[columns].T
        r, c = np.nonzero(block >= floor)
        found += zip(part[r].tolist(), columns[c].tolist(), block[r, c].tolist())
    return found


def candidate_triples(lists: Mapping[str, Sequence[tuple[str, float]]], position: Mapping[str, int],
                      unit: np.ndarray, threshold: float, titles: Mapping[str, str], firsts: Mapping[str, str],
                      max_per_note: int) -> list[Triple]:
    """The candidates of the lists: every pair one of whose notes lists the other, at least
    ``threshold`` similar in float64, subject the note first by id, best pairs first (ties by
    subject's then object's title), each title in at most ``max_per_note`` of them, as
    :func:`best_per_note` keeps them. Only the pairs kept become triples."""
    n = len(position)
    firsts_of: list[int] = []
    seconds_of: list[int] = []
    for note, entries in lists.items():
        if (at := position.get(note)) is not None:
            for neighbour, _ in entries:
                if (other := position.get(neighbour)) is not None:
                    firsts_of.append(at)
                    seconds_of.append(other)
    if not firsts_of:
        return []
    a, b = np.array(firsts_of, dtype=np.int64), np.array(seconds_of, dtype=np.int64)
    codes = np.sort(np.minimum(a, b) * n + np.maximum(a, b))  # distinct by sorting: np.unique's hash path is slower
    pairs = codes[np.r_[True, codes[1:] != codes[:-1]]]
    i_of, j_of = pairs // n, pairs % n
    similarity = np.empty(len(pairs))
    for lo in range(0, len(pairs), PAIRS_AT_ONCE):  # exact cosines, a slice of pairs at a time
        part = slice(lo, lo + PAIRS_AT_ONCE)
        similarity[part] = np.einsum("ij,ij->i", unit[i_of[part]], unit[j_of[part]])
    above = similarity >= threshold
    i_of, j_of, confidence = i_of[above], j_of[above], np.minimum(similarity[above], 1.0)
    ids = sorted(position, key=position.__getitem__)
    shown = [titles.get(note, note) for note in ids]
    _, title_rank = np.unique(np.array(shown, dtype=object), return_inverse=True)  # equal titles, equal rank
    order = np.lexsort((title_rank[j_of], title_rank[i_of], -confidence))
    used = [0] * len(shown)
    kept = []
    for i, j, s, ti, tj in zip(i_of[order].tolist(), j_of[order].tolist(), confidence[order].tolist(),
                               title_rank[i_of[order]].tolist(), title_rank[j_of[order]].tolist()):
        if used[ti] < max_per_note and used[tj] < max_per_note:
            used[ti] += 1
            used[tj] += 1
            kept.append(Triple(shown[i], "SIMILAR_TO", shown[j], firsts.get(ids[i], ""), s, "candidate", "note", "note"))
    return kept


def best_per_note(found: Sequence[Triple], max_per_note: int) -> list[Triple]:
    """The candidates kept, best pairs first (as ``found`` comes), each note in at most
    ``max_per_note`` of them, so near-identical notes stay linear.

    Examples
    --------
    >>> found = [Triple("A", "SIMILAR_TO", "B", "", 0.9, "candidate"), Triple("A", "SIMILAR_TO", "C", "", 0.8, "candidate")]
    >>> [(t.subject, t.object) for t in best_per_note(found, 1)]
    [('A', 'B')]
    """
    kept = []
    per_note: defaultdict[str, int] = defaultdict(int)
    for triple in found:
        if per_note[triple.subject] < max_per_note and per_note[triple.object] < max_per_note:
            per_note[triple.subject] += 1
            per_note[triple.object] += 1
            kept.append(triple)
    return kept


def _mean_vectors(store: Store, vectors_of: VectorsOf, notes: Sequence[str]) -> dict[str, tuple[str, np.ndarray]]:
    """``note -> (first chunk id, mean chunk vector)`` for ``notes``, a page of chunks at a time
    (a note of 200,000 chunks holds one page of vectors, not all of them). The mean is summed in
    float64 chunk by chunk and kept in float32, as the whole-corpus step makes it."""
    out: dict[str, tuple[str, np.ndarray]] = {}
    total: np.ndarray | None = None
    count, current, first = 0, "", ""
    for chunks in store.notes.chunk_pages_of_documents(notes, MEAN_PAGE_CHUNKS):  # by document, then ordinal
        vectors = vectors_of([text for _, _, text in chunks])
        for (document, chunk_id, _), vector in zip(chunks, vectors.astype(np.float64)):
            if document != current:
                if total is not None:
                    out[current] = (first, (total / count).astype(np.float32))
                current, first, total, count = document, chunk_id, vector.copy(), 1
            else:
                total += vector
                count += 1
    if total is not None:
        out[current] = (first, (total / count).astype(np.float32))
    return out
