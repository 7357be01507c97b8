"""The documentation names every setting and every retrieval mode."""

from __future__ import annotations

from tests.conftest import ROOT

from workbench.retrieve import MODES
from workbench.settings import Settings, load_settings, render_defaults_yaml


def test_settings_yaml_documents_every_setting_with_its_default():
    text = (ROOT / "settings.yaml").read_text(encoding="utf-8")
    assert text == render_defaults_yaml(), "settings.yaml is stale: python -m workbench settings --defaults > settings.yaml"
    assert load_settings(ROOT / "settings.yaml") == Settings()
    for section in Settings.model_fields:
        for name, info in type(getattr(Settings(), section)).model_fields.items():
            assert f"  {name}:" in text
            assert info.description and info.description in text


def test_readme_describes_every_retrieval_mode():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for mode in MODES:
        assert f"| `{mode}` |" in readme, f"README.md has no row for retrieval mode {mode!r}"
    for used in ("full_graphrag", "vector_only", "keyword_only"):
        assert f"`{used}`" in readme


def test_readme_starts_with_the_two_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = readme.split("```bash\n")[1:3]
    commands = [b.split("```")[0].strip() for b in blocks]
    assert "streamlit run app.py" in commands[0] and "pip install -r requirements.txt" in commands[0]
    assert commands[1] == "bash .ci/run"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.rstrip().endswith(".venv/bin/python -m pytest")


def _notebook_text(name: str) -> str:
    import json

    cells = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))["cells"]
    return " ".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")


def test_the_notebooks_say_what_graphrag_seeds_from_and_who_survives_an_impact():
    """graphrag seeds mainly from the names a question writes (notebook 02 prints them as
    ``named``); impact's survivors are the entities of any cited relation it does not reach."""
    compare = _notebook_text("02_compare_retrieval")
    assert "Seeds are mainly the entities the question names" in compare
    assert "entities most similar to the question" not in compare
    quickstart = _notebook_text("01_quickstart")
    assert "take part in impact relations" not in quickstart
    assert "Reverse reachability over every relation" in quickstart
    assert "take part in any cited relation" in quickstart


def test_the_readme_states_the_seed_fidelity_each_test_holds():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "power iteration over the entity graph's directed relation edges" in text  # tests/test_graphrag_seed.py
    assert "`graphrag.seed_max_graph_nodes` (the seed's 50,000)" in text
    assert "standard hybrid search's chunks fused by RRF" in text
    assert "one-hop expansion over the recorded relations" in text  # tests/test_expand_both_ways.py
    assert "`impact ENTITY [--relations all\\|dependencies]`" in text  # tests/test_graph_questions.py
    assert "forward (`out`) by default as seed 001's" in text
    assert "a conversation log's message pairs every two of its entities, as seed 002 says" in text
    assert "is kept after the dated hits whatever its own date" in text  # tests/test_expand_both_ways.py
