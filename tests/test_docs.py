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
