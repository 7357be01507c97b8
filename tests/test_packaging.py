"""The package: its metadata in pyproject.toml, the locked requirements, the public API."""

from __future__ import annotations

import subprocess
import sys
import tomllib

from tests.conftest import ROOT


def _pins(path) -> list[str]:
    lines = (line.split("#")[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line and not line.startswith("-r")]


def test_pyproject_dependencies_are_the_locked_requirements():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["dependencies"] == _pins(ROOT / "requirements.txt")
    assert "torch==2.13.0" in project["dependencies"]


def test_every_requirement_is_pinned_to_one_version():
    for name in ("requirements.txt", "requirements-dev.txt"):
        loose = [pin for pin in _pins(ROOT / name) if "==" not in pin]
        assert not loose, f"{name}: not pinned: {loose}"


def test_console_script_is_the_cli_main():
    import workbench.cli

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    module, _, function = project["scripts"]["workbench"].partition(":")
    assert (module, function) == ("workbench.cli", "main") and callable(workbench.cli.main)


def test_public_api_is_exported_without_loading_the_heavy_modules():
    code = ("import sys, workbench; v = workbench.__version__; "
            "print(v, sorted(m for m in ('torch', 'chromadb', 'workbench.workspace') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.split() == ["0.1.0", "[]"]


def test_public_api_names_workspace_retrieve_load_settings_and_the_result_dataclasses():
    import workbench
    import workbench.model
    from workbench.retrieve import retrieve
    from workbench.settings import load_settings
    from workbench.workspace import Workspace

    assert workbench.Workspace is Workspace and workbench.load_settings is load_settings
    for name in ("RetrievalResult", "Hit", "Why", "RetrievalStats", "GraphContext"):
        assert name in workbench.__all__ and getattr(workbench, name) is getattr(workbench.model, name)
    # workbench.retrieve is the strategies' package, callable as its retrieve() function.
    assert callable(workbench.retrieve) and workbench.retrieve.retrieve is retrieve


def test_help_names_the_command_as_it_was_invoked():
    from workbench.cli import build_parser, invoked_as

    out = subprocess.run([sys.executable, "-m", "workbench", "--help"], capture_output=True, text=True, check=True,
                         cwd=ROOT).stdout
    assert out.startswith("usage: python -m workbench ")
    # The console script runs with its own path as argv[0].
    assert build_parser(invoked_as("/opt/venv/bin/workbench")).format_usage().startswith("usage: workbench ")


def test_the_package_data_ships_every_file_under_workbench_data():
    # The int8 export reads its calibration set from workbench/data, and the models' licences ship there:
    # an installed package needs every file.
    import fnmatch

    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]
    files = [p.relative_to(ROOT / "workbench").as_posix() for p in (ROOT / "workbench" / "data").rglob("*") if p.is_file()]
    assert files and all(any(fnmatch.fnmatch(f, pattern) for pattern in patterns["workbench"]) for f in files)
