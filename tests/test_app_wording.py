"""AppTests of the Compare page's wording (issue 56): the columns say the same thing of the
question from the same data."""

from __future__ import annotations

from tests.test_app import open_app, page


def test_every_compare_column_says_the_same_names_of_the_question(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "compare")
    at.text_input(key="keep.compare.question").input("What did the data team decide?")
    at.multiselect(key="keep.compare.modes").set_value(["graphrag", "paths"])
    at.button(key="compare.run").click().run()
    assert not at.exception
    heads = [c.value.replace("\\", "") for c in at.caption if c.value.startswith("mode used:")]
    assert len(heads) == 2, heads
    assert not any("entities named" in head for head in heads), heads  # graphrag said "0 entities named"
    assert all("it names Data team" in head for head in heads), heads
