"""The Corpus page keeps a folder live: it starts a watch, shows its last batch, and stops it."""

from __future__ import annotations

import time

from tests.test_app import open_app, texts


def test_the_corpus_page_starts_a_watch_shows_its_batches_and_stops_it(monkeypatch, make_workspace, tmp_path):
    import ui

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("The portal depends on the auth service.\n", encoding="utf-8")
    ws = make_workspace()
    monkeypatch.chdir(tmp_path)  # the folder the app is started in: typed paths below it
    at = open_app(monkeypatch, ws.path)
    at.text_input(key="keep.corpus.watch_folder").input(str(notes))
    at.button(key="corpus.watch_start").click().run()
    try:
        assert not at.exception
        assert ui.md_text(f"watching {notes}: no change yet") in texts(at)
        assert ws.store.count("documents") == 1  # caught up before the page said so

        (notes / "b.md").write_text("Billing calls the ledger service.\n", encoding="utf-8")
        deadline = time.monotonic() + 120
        while ws.store.count("documents") < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        watching = ui.folder_watch(ws)
        assert watching is not None
        # told written, then its files saved for other processes: the page shows the batch written
        while not any(b.number == 1 and b.state == "saved" for b in watching.batches) and time.monotonic() < deadline:
            time.sleep(0.2)
        at.run()
        assert not at.exception
        assert ui.md_text(f"watching {notes}: batch 1 written, 1 added, 0 updated, 0 removed; 2 documents") in texts(at)
        assert "b.md" in " ".join(at.dataframe[0].value["document"])

        at.button(key="corpus.watch_stop").click().run()
        assert not at.exception and not watching.running
        assert at.button(key="corpus.watch_start")  # the folder box is back
    finally:
        watching = ui.folder_watch(ws)
        if watching is not None:
            watching.stop(timeout=60)
