"""The entity-name index follows a write by the keys it changed: a process that follows its
writes (a watch) syncs only the keys its derivation aggregated again, and writes the very files
a sync comparing every name writes over the same index: the same rows, vectors, version, base
and delta."""

from __future__ import annotations

import errno
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_entity_vectors import Hashing, random_names
from tests.test_incremental_derivation import NOTES as VAULT_NOTES
from tests.test_incremental_derivation import OPS, Parts, Vault
from workbench.ingest.failures import StepFailed
from workbench.runtime.array_file import read_manifest
from workbench.vectors import entity_vectors
from workbench.vectors.entity_vectors import DELTA_FILE_NAME, DELTA_FROM_ROWS, FILE_NAME, EntityVectors


def contents(index: EntityVectors) -> dict[str, tuple[str, bytes]]:
    """Key -> (name, vector bytes) of every row the index holds (base rows not superseded, then the delta's)."""
    loaded = index._current()
    assert loaded is not None
    base = len(loaded.keys)
    positions = np.flatnonzero(loaded.live()).tolist()
    positions += range(base, base + (len(loaded.delta.keys) if loaded.delta is not None else 0))
    vectors = loaded.vectors_at(positions)
    return {loaded.key_at(p): (loaded.name_at(p), vectors[i].tobytes()) for i, p in enumerate(positions)}


def files(folder) -> dict[str, tuple]:
    """What identifies each file of an index: its version, the checksum of its arrays and its base."""
    found = {}
    for name, kind in ((FILE_NAME, "entity_vectors"), (DELTA_FILE_NAME, "entity_vectors_delta")):
        if (folder / name).exists():
            manifest = read_manifest(folder / name, kind, (1, 2))
            found[name] = (manifest["key"], manifest["checksum"], manifest.get("base"))
    return found


def copy_index(source, target):
    target.mkdir()
    for name in (FILE_NAME, DELTA_FILE_NAME):
        if (source / name).exists():
            shutil.copy2(source / name, target / name)
    return target


def test_syncing_the_changed_keys_writes_the_files_a_sync_of_every_name_writes(tmp_path):
    """Random removals, renames (often to a name held, or back to the base's), additions and
    keys named but unchanged, over a delta that grows past a tenth of the base and is folded."""
    rng = np.random.default_rng(5)
    (tmp_path / "keys").mkdir()
    index, embed = EntityVectors(tmp_path / "keys", delta_from_rows=50), Hashing()
    names = random_names(rng, 300)
    index.sync(names, "0", "m", embed)
    renamed_back, deltas = 0, set()  # deltas: whether each sync left a delta
    for step in range(1, 40):
        every = EntityVectors(copy_index(tmp_path / "keys", tmp_path / f"every{step}"), delta_from_rows=50)
        loaded = index._current()
        base = dict(zip(loaded.keys, loaded.names))
        changes: dict[str, str | None] = {}
        # A few keys changed again and again, so some come back to the name their base row has.
        for key in rng.choice(sorted(names)[:20], size=int(rng.integers(0, 6)), replace=False).tolist():
            roll = rng.random()
            changes[key] = None if roll < 0.3 else base.get(key, names[key]) if roll < 0.5 else \
                names[key] if roll < 0.6 else f"Name {int(rng.integers(0, 3000))}"
            renamed_back += key in base and names[key] != base[key] == changes[key]
        changes.update({key: name for key, name in random_names(rng, int(rng.integers(0, 4)), 1000 + 10 * step).items()})
        changes[f"never{step}"] = None  # a key aggregated again and gone, never held
        for key, name in changes.items():
            if name is None:
                names.pop(key, None)
            else:
                names[key] = name
        asked_keys, asked_every = embed.asked, Hashing()
        changed = index.sync_keys(changes, str(step - 1), str(step), "m", embed)
        assert changed == every.sync(names, str(step), "m", asked_every)
        assert embed.asked - asked_keys == asked_every.asked  # the same names embedded, no more
        assert files(tmp_path / "keys") == files(tmp_path / f"every{step}")
        assert contents(EntityVectors(tmp_path / "keys")) == contents(every)
        deltas.add(DELTA_FILE_NAME in files(tmp_path / "keys"))
    assert renamed_back  # a key renamed back to its base row's name: that row is held again
    assert deltas == {True, False}  # deltas written, and folded into a base written whole
    assert index.sync_keys({"e1": "Other"}, "38", "40", "m", embed) is None  # made for 39: not followed
    assert index.sync_keys({"e1": "Other"}, "39", "40", "other model", embed) is None


def test_a_name_found_in_a_text_column_is_its_first_row(tmp_path):
    from workbench.runtime.array_file import TextColumn

    values = ["Redis", "Kafka", "Redis", "", "a\x00", "a", "ab", "\x00a", "Zürich", "Zurich"]
    column = TextColumn(*TextColumn.arrays(values))
    first = {}
    for row, value in enumerate(values):
        first.setdefault(value, row)
    assert column.positions([*values, "Solr", "a\x00\x00", "Zürich!"]) == first


NOTES = {
    "outage.md": "# Outage\n\nThe Auth Service depends on the token cache, backed by Redis.\n"
                 "The Billing Service depends on the Auth Service and Postgres.\n",
    "search.md": "# Search\n\nThe Search Service depends on Elasticsearch.\n",
    "queue.md": "# Queue\n\nThe Mail Service writes to Kafka. Kafka feeds the Audit Log.\n",
    "ledger.md": "# Ledger\n\n" + "".join(f"The Ledger {i} Service depends on the Archive {i} Store.\n"
                                           for i in range(40)),
}


def _primed(make_workspace, tmp_path):
    """A workspace of the NOTES, primed to follow its writes as a watch is once caught up; and the notes' folder."""
    ws = make_workspace()
    notes = tmp_path / "notes"
    notes.mkdir()
    for name, text in NOTES.items():
        (notes / name).write_text(text, encoding="utf-8")
    ws.ingest([notes])
    assert ws.derivation.prime()
    return ws, notes


@pytest.mark.parametrize("delta_from_rows", [1, DELTA_FROM_ROWS], ids=["delta", "whole"])
def test_a_followed_write_syncs_the_name_index_by_the_keys_it_changed(make_workspace, tmp_path, monkeypatch,
                                                                      delta_from_rows):
    ws, notes = _primed(make_workspace, tmp_path)
    ws.entity_vectors.delta_from_rows = delta_from_rows
    diffs = []
    real = entity_vectors.changes_from
    monkeypatch.setattr(entity_vectors, "changes_from", lambda *args: diffs.append(1) or real(*args))

    def write(name: str, text: str | None) -> None:
        if text is None:
            (notes / name).unlink()
        else:
            (notes / name).write_text(text, encoding="utf-8")
        ws.ingest([notes])

    writes = [
        ("add", lambda: write("cache.md", "# Cache\n\nThe Session Store uses Redis and Memcached.\n")),
        ("edit", lambda: write("search.md", "# Search\n\nThe Search Service depends on OpenSearch and Redis.\n")),
        ("remove", lambda: write("queue.md", None)),
        ("alias", lambda: ws.corrections.add_alias("Billing Service", "Auth Service")),
        ("unalias", lambda: ws.corrections.remove_alias("Billing Service")),
    ]
    deltas = []  # whether each write left a delta
    for label, step in writes:
        before = copy_index(ws.path, tmp_path / f"before-{label}")
        version = ws.store.version
        step()
        assert ws.store.version != version, label
        assert ws.derivation.keys_changed is not None and ws.derivation.keys_changed.since == version, label
        assert ws.names.compared == "keys" and not diffs, label  # no diff of every name
        wanted = {entity.key: entity.name for entity in ws.graph.entities()}
        held = contents(ws.entity_vectors)
        assert {key: name for key, (name, _) in held.items()} == wanted, label
        assert ws.entity_vectors.version() == str(ws.store.version), label
        # A sync of every name over the same files writes the same files.
        every = EntityVectors(before, delta_from_rows=delta_from_rows)
        every.sync(wanted, str(ws.store.version), ws.embedder.name, ws.embedder.embed, dimension=ws.embedder.dimension)
        assert files(ws.path) == files(before) and contents(every) == held, label
        deltas.append(DELTA_FILE_NAME in files(ws.path))
        # An index written afresh holds the same names with their vectors.
        (tmp_path / f"fresh-{label}").mkdir()
        fresh = EntityVectors(tmp_path / f"fresh-{label}")
        fresh.sync(wanted, str(ws.store.version), ws.embedder.name, ws.embedder.embed)
        fresh_rows = contents(fresh)
        assert fresh_rows.keys() == held.keys()
        for key, (name, vector) in held.items():
            assert fresh_rows[key][0] == name
            np.testing.assert_allclose(np.frombuffer(vector, dtype=np.float32),
                                       np.frombuffer(fresh_rows[key][1], dtype=np.float32), atol=1e-5)
        diffs.clear()
    # Over a base of one row or more, a note added goes to the delta (the alias folds it: past a
    # tenth of the base); under the default, a small base is written whole each time.
    assert deltas[0] if delta_from_rows == 1 else not any(deltas)


def test_a_full_disk_in_a_followed_sync_is_told_and_the_next_write_compares_every_name(make_workspace, tmp_path,
                                                                                     monkeypatch):
    ws, notes = _primed(make_workspace, tmp_path)
    ws.entity_vectors.delta_from_rows = 1
    before = files(ws.path)
    real = entity_vectors.write_array_file

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(entity_vectors, "write_array_file", full_disk)
    (notes / "cache.md").write_text("# Cache\n\nThe Session Store uses Redis and Memcached.\n", encoding="utf-8")
    with pytest.raises(StepFailed, match="free disk space.*repair"):
        ws.ingest([notes])
    assert ws.names.compared == "keys" and files(ws.path) == before  # the followed sync failed, nothing written
    monkeypatch.setattr(entity_vectors, "write_array_file", real)
    for label, text in (("every name", "# Mail\n\nThe Mail Service writes to Kafka.\n"),
                        ("keys", "# Mail\n\nThe Mail Service writes to Pulsar.\n")):
        (notes / "mail.md").write_text(text, encoding="utf-8")
        ws.ingest([notes])
        # First the index is two records behind the derivation's: every name compared; then followed again.
        assert ws.names.compared == label
        held = {key: name for key, (name, _) in contents(ws.entity_vectors).items()}
        assert held == {entity.key: entity.name for entity in ws.graph.entities()}
        assert "memcached" in held and ws.entity_vectors.version() == str(ws.store.version)


@pytest.fixture
def parts(embedder, settings) -> Parts:
    return Parts(embedder, settings)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                              HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(OPS, st.integers(0, VAULT_NOTES - 1), st.integers(0, 10_000)), min_size=2,
                      max_size=6),
       start=st.integers(0, 10_000))
def test_after_random_writes_the_name_index_followed_by_keys_holds_the_graphs_names(parts, steps, start):
    """Notes written and removed, aliases and splits made and undone (renames, merges, names
    common or not): each write is followed by its keys, and the index holds every entity's name."""
    with tempfile.TemporaryDirectory() as folder:
        vault = Vault(Path(folder), parts.embedder, parts.settings)
        try:
            vault.seed(start)
            assert vault.ws.derivation.prime()
            vault.ws.entity_vectors.delta_from_rows = 1  # each write over a delta, while under a tenth
            for op, i, seed in steps:
                version = vault.ws.store.version
                if vault.apply(op, i, seed) == "nothing" or vault.ws.store.version == version:
                    continue
                assert vault.ws.names.compared == "keys", op
                held = {key: name for key, (name, _) in contents(vault.ws.entity_vectors).items()}
                assert held == {entity.key: entity.name for entity in vault.ws.graph.entities()}, (steps, op)
        finally:
            vault.ws.close()
