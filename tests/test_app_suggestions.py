"""The Canonicalization page's merge suggestions: their total, their pages, accepting one on page 2."""

from __future__ import annotations

from tests.test_app import open_app, page

PEOPLE = ["Mara Chen", "Devon Ruiz", "Sam Okafor", "Jo Patel", "Li Wei", "Ana Kowalski", "Ken Ito", "Noor Haddad",
          "Ravi Menon", "Tomas Berg", "Grace Okafor", "Irene Blake", "Ruth Adams", "Colin Price", "Leah Fox"]


def test_suggestions_show_their_total_and_page(monkeypatch, make_workspace, tmp_path):
    corpus = tmp_path / "people"
    corpus.mkdir()
    for i, person in enumerate(PEOPLE):
        handle = "@" + person.lower().replace(" ", ".")
        (corpus / f"note{i:02d}.md").write_text(
            f"---\ntitle: Note {i}\n---\nThe review was written by {person} for the platform group.\n\n"
            f"Questions go to {handle} on the chat.\n", encoding="utf-8")
    ws = make_workspace("people-ws")
    ws.ingest([corpus])
    total = len(ws.corrections.suggestions())
    assert total > 12
    at = page(open_app(monkeypatch, ws.path), "canonicalization")
    captions = [c.value for c in at.caption]
    assert any(f"{total} suggestions in 2 pages: showing 1-12" in c for c in captions), captions
    assert sum("↔" in m.value for m in at.markdown) == 12
    at.number_input(key="keep.canon.suggestion_page").set_value(2).run()
    assert not at.exception
    shown = [m.value for m in at.markdown if "↔" in m.value]
    assert len(shown) == total - 12 and shown[0].startswith("13. ")
    second_page_first = ws.corrections.suggestions()[12]
    at.button(key="canon.accept.12").click().run()
    assert not at.exception
    assert ws.graph.resolve(second_page_first.a) == ws.graph.resolve(second_page_first.b)
