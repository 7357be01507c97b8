"""Writes that cost what they change: after any sequence of adds, edits, removes, alias changes
and restarts of the writing process (the next one follows the state the last one kept), the
graph a writing process keeps and follows (workbench.context_graph.graph_state) is saved as the snapshot a full derivation of the same record makes, array by array, and the keyword
index it keeps equals one built afresh, term by term. A deliberate mutation (a removed document's
rows not subtracted) is caught by the same check.

Real parts: the bundled model, Chroma, SQLite. Notes name services in several spellings, titles
with qualifiers ("Tim McCann (director)") whose short forms other notes write, near-identical names
(synonym edges), names in more passages than ``graph.max_entity_passages`` (common names, which
flip as notes come and go), stated relations and declared links between notes.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, HealthCheck, settings
from hypothesis import strategies as st

from workbench.context_graph import parts_state
from workbench.context_graph.canon import build_merges
from workbench.context_graph.graph_snapshot import FILE_NAME as SNAPSHOT_FILE
from workbench.context_graph.graph_snapshot import FORMAT, KIND, _graph_arrays
from workbench.corpus.keyword_index import KeywordIndex
from workbench.runtime.array_file import read_array_file

SERVICES = ["Auth Service", "auth-service", "Billing Service", "the Billing service", "Redis", "redis", "Postgres",
            "PostgreSQL", "Wiley-Blackwell", "Wiley Blackwel", "Token Cache", "token-cache"]
TITLES = ["Tim McCann (director)", "Tim McCann (actor)", "Maurice, Prince of Orange", "Emperor Gaozong of Tang",
          "Redis", "Billing Service", "Weekly review"]
SHORT_FORMS = ["Tim McCann", "Maurice", "Emperor Gaozong"]
VERBS = ["depends on", "calls", "uses", "writes to"]
NOTES = 6


def note_text(seed: int, notes: int = NOTES) -> str:
    """A short note: a title (some with qualifiers), a date, a declared link now and then, and
    sentences naming services, titles and their short forms."""
    rng = random.Random(seed)
    title = rng.choice(TITLES)
    link = f"relations:\n  - {{type: LEADS_TO, target: note-{rng.randrange(notes)}.md}}\n" if rng.random() < 0.3 else ""
    names = SERVICES + SHORT_FORMS + TITLES
    sentences = [f"{rng.choice(names)} {rng.choice(VERBS)} {rng.choice(names)}." for _ in range(rng.randrange(1, 4))]
    second = f"\n\n{rng.choice(SHORT_FORMS)} reviewed {rng.choice(SERVICES)}." if rng.random() < 0.5 else ""
    return (f'---\ntitle: "{title}"\ndate: "2024-0{rng.randrange(1, 10)}-1{rng.randrange(10)}"\n{link}---\n'
            f"# {title}\n\n{' '.join(sentences)}{second}\n")


def differences(ws) -> list[str]:
    """Names of the snapshot arrays (and keyword index parts) where what the writer kept differs
    from a full derivation of its record; empty when they are equal."""
    kept_merges = ws.merges()
    _, saved = read_array_file(ws.path / SNAPSHOT_FILE, KIND, FORMAT, ws.derivation.snapshot_key())
    full = ws.derivation.assemble()  # every mention, triple and passage read again
    expected = _graph_arrays(full, build_merges(ws.store.iter_mentions(), ws.canonicalizer()))
    found = [name for name in sorted(saved.keys() | expected.keys())
             if name not in saved or name not in expected or saved[name].dtype != expected[name].dtype
             or not np.array_equal(saved[name], expected[name])]
    if kept_merges != build_merges(ws.store.iter_mentions(), ws.canonicalizer()):
        found.append("merges")
    return found + keyword_differences(ws)


def keyword_differences(ws) -> list[str]:
    """Where the kept keyword index differs from one built afresh: its passages, and each term's
    passages and scores (term ids differ: the kept vocabulary keeps the words of removed passages)."""
    kept = ws.keyword_index(ws.store.version)
    chunks = sorted(ws.store.chunks(), key=lambda c: c.id)
    fresh = KeywordIndex.build([c.id for c in chunks], [c.text for c in chunks])
    if sorted(kept._ids) != sorted(fresh._ids):
        return ["keyword passages"]
    if fresh._bm25 is None or kept._bm25 is None:
        return [] if fresh._bm25 is kept._bm25 else ["keyword index"]

    def columns(index: KeywordIndex) -> dict[str, tuple]:
        scores, vocabulary = index._bm25.scores, index._bm25.vocab_dict
        out = {}
        for term, at in vocabulary.items():
            if at + 1 < len(scores["indptr"]):
                lo, hi = scores["indptr"][at], scores["indptr"][at + 1]
                if hi > lo:
                    ids = [index._ids[i] for i in scores["indices"][lo:hi]]
                    out[term] = tuple(sorted(zip(ids, scores["data"][lo:hi].tolist())))
        return out

    return [] if columns(kept) == columns(fresh) else ["keyword scores"]


class Vault:
    """A folder of notes and the workspace that follows it, one write at a time."""

    def __init__(self, folder: Path, embedder, base_settings) -> None:
        from workbench.workspace import Workspace

        self.corpus = folder / "notes"
        self.corpus.mkdir()
        changed = base_settings.model_copy(deep=True)
        changed.graph.max_entity_passages = 3  # names in more passages become common, and back
        self.folder, self.settings, self.embedder = folder, changed, embedder
        self.ws = Workspace(folder / "ws", settings=changed, embedder=embedder)

    def seed(self, start: int, notes: int = 3) -> None:
        """The first notes, ingested in one step (a full derivation)."""
        for i in range(notes):
            (self.corpus / f"note-{i}.md").write_text(note_text(start + i), encoding="utf-8")
        self.ws.ingest([self.corpus])

    def write(self, i: int, seed: int) -> str:
        (self.corpus / f"note-{i}.md").write_text(note_text(seed), encoding="utf-8")
        self.ws.ingest([self.corpus])
        return "write"

    def remove(self, i: int) -> str:
        return self.remove_file(f"note-{i}.md")

    def remove_file(self, name: str) -> str:
        path = self.corpus / name
        if not path.exists():
            return "nothing"
        path.unlink()
        self.ws.ingest([self.corpus])  # as a watched folder's removal is written
        return "remove"

    def alias(self, seed: int) -> str:
        rng = random.Random(seed)
        names = [e.name for e in self.ws.entities()] + SERVICES
        try:
            self.ws.corrections.add_alias(rng.choice(names), rng.choice(names))
        except ValueError:
            return "nothing"
        return "alias"

    def unalias(self, seed: int) -> str:
        aliases = sorted(self.ws.store.aliases())
        if not aliases:
            return "nothing"
        self.ws.corrections.remove_alias(random.Random(seed).choice(aliases))
        return "unalias"

    def split(self, seed: int) -> str:
        self.ws.corrections.split(random.Random(seed).choice(SERVICES + SHORT_FORMS))
        return "split"

    def unsplit(self, seed: int) -> str:
        splits = sorted(self.ws.store.splits())
        if not splits:
            return "nothing"
        self.ws.corrections.unsplit(random.Random(seed).choice(splits))
        return "unsplit"

    def restart(self, seed: int) -> str:
        """The writing process ends, keeping its state on disk; the next one follows it from there
        (workbench.context_graph.graph_state_file), not from what it derived itself."""
        from workbench.workspace import Workspace

        self.ws.derivation.save_state()
        self.ws.close()
        self.ws = Workspace(self.folder / "ws", settings=self.settings, embedder=self.embedder)
        return "restart"

    def apply(self, op: str, i: int, seed: int) -> str:
        if op in ("write", "remove"):
            return getattr(self, op)(*((i, seed) if op == "write" else (i,)))
        return getattr(self, op)(seed)


OPS = st.sampled_from(["write", "write", "write", "remove", "remove", "alias", "unalias", "split", "unsplit",
                       "restart"])


class Parts:
    """The session's model and settings, shown briefly in a falsifying example."""

    def __init__(self, embedder, settings) -> None:
        self.embedder, self.settings = embedder, settings

    def __repr__(self) -> str:
        return "Parts(the bundled model, the default settings)"


@pytest.fixture
def parts(embedder, settings) -> Parts:
    return Parts(embedder, settings)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                               HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(OPS, st.integers(0, NOTES - 1), st.integers(0, 10_000)), min_size=2, max_size=6),
       start=st.integers(0, 10_000))
# a note written again, then an alias: the merge entry's forms (and so its reasons) in the order the
# mentions meet them, not in the order of the form ids (a run of the suite found it)
@example(steps=[("write", 0, 0), ("alias", 0, 1166)], start=504)
def test_random_writes_keep_the_snapshot_of_a_full_derivation(parts, steps, start):
    with tempfile.TemporaryDirectory() as folder:
        vault = Vault(Path(folder), parts.embedder, parts.settings)
        try:
            vault.seed(start)
            assert vault.ws.derivation.touched == "everything"
            assert differences(vault.ws) == []
            assert len(vault.ws.graph) and vault.ws.graph.edges()  # a comparison of nothing proves nothing
            for op, i, seed in steps:
                version = vault.ws.store.version
                if vault.apply(op, i, seed) == "nothing" or vault.ws.store.version == version:
                    continue  # nothing written (a note written as it was, an alias refused)
                assert vault.ws.derivation.touched != "everything", (op, vault.ws.derivation.rows_status)
                assert differences(vault.ws) == [], (steps, op)
        finally:
            vault.ws.close()


def test_a_write_on_a_large_vault_touches_only_its_keys(embedder, settings, tmp_path):
    """One note among many: the keys and chunks aggregated again are the note's, not the vault's."""
    vault = Vault(tmp_path, embedder, settings)
    try:
        for i in range(12):
            (vault.corpus / f"note-{i}.md").write_text(note_text(100 + i, 12), encoding="utf-8")
        vault.ws.ingest([vault.corpus])
        (vault.corpus / "note-12.md").write_text("# Quartz Scheduler\n\nQuartz Scheduler calls Redis.\n",
                                                 encoding="utf-8")
        vault.ws.ingest([vault.corpus])
        touched = vault.ws.derivation.state.parts.touched
        assert touched is not None and touched.keys == {"quartzscheduler", "redis"}
        assert len(touched.chunks) == 1
        assert differences(vault.ws) == []
    finally:
        vault.ws.close()


def test_a_removed_note_not_subtracted_is_caught(embedder, settings, tmp_path, monkeypatch):
    """The check fails when a write forgets to subtract what a removed document gave (its edges'
    corroboration, its entities' mentions): the mutation is seen, not waved through."""
    real = parts_state._changed

    def forgetful(old, new, fields):
        gone, came = real(old, new, fields)
        kept = np.zeros(len(gone["ident"]), dtype=bool)
        return {name: column[kept] for name, column in gone.items()}, came

    vault = Vault(tmp_path, embedder, settings)
    try:
        for i in range(3):
            (vault.corpus / f"note-{i}.md").write_text(f"# Note {i}\n\nAuth Service depends on Redis. Note {i} "
                                                       "calls Billing Service.\n", encoding="utf-8")
        vault.ws.ingest([vault.corpus])
        assert differences(vault.ws) == []
        monkeypatch.setattr(parts_state, "_changed", forgetful)
        vault.remove(1)
        found = differences(vault.ws)
        assert "edge_chunks_offsets" in found and "entity_mentions" in found, found
        monkeypatch.setattr(parts_state, "_changed", real)
        vault.write(1, 5)  # the next write still follows the mutated state: told apart by a fresh process
        assert differences(vault.ws) != []
    finally:
        vault.ws.close()


@pytest.mark.parametrize("seed", [3, 17])
def test_title_short_forms_and_common_names_follow_writes(embedder, settings, tmp_path, seed):
    """Known answers: a note titled with a qualifier is linked from the passages that write its short
    form, and stops being so once removed; a name in more than three passages is common."""
    vault = Vault(tmp_path, embedder, settings)
    try:
        vault.corpus.joinpath("a.md").write_text("# Tim McCann (director)\n\nHe filmed in Oslo.\n", encoding="utf-8")
        for i in range(4):
            said = "Tim McCann uses Redis." if i < 2 else "Redis holds the sessions."
            vault.corpus.joinpath(f"b{i}.md").write_text(f"# Review {i + seed}\n\n{said}\n", encoding="utf-8")
        vault.ws.ingest([vault.corpus])
        layer = vault.ws.graph.passages
        assert len(layer.title_links) == 2 and "redis" in layer.common and "timmccann" not in layer.common
        assert differences(vault.ws) == []
        vault.remove_file("a.md")
        assert not vault.ws.graph.passages.title_links
        assert vault.ws.derivation.touched != "everything"
        assert differences(vault.ws) == []
    finally:
        vault.ws.close()
