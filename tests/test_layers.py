"""The direction of the imports inside workbench/: data flows one way, and the core never imports
streamlit. Every module of the package is read with ``ast`` (nothing is imported)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "workbench"

#: Lowest first. A module may import its own layer and the layers below it, never one above.
#: The core is layers 0-3; ``views`` (tables, text and HTML for people) sits above it, and the
#: surfaces inside the package (the CLI, the MCP server) on top. app.py, pages/ and ui.py sit
#: above all of these, outside the package.
LAYERS = [
    {"model", "settings", "progress", "safe_text", "safe_yaml", "cores", "array_file", "allowed_paths"},
    {"loaders", "chunking", "extract", "canon", "graph", "passages", "ppr", "store", "vectors", "entity_vectors",
     "embedding", "static_embedder", "exported_embedder", "distributed_embedder", "quantize", "sentences",
     "communities", "keyphrases", "episodes", "timeline", "local_model", "note_neighbours", "installable"},
    {"ingest", "assemble", "graph_snapshot", "workspace", "scope", "summaries", "graph_questions"},
    {"retrieve", "context", "evaluate", "bench"},
    {"views"},
    {"cli", "mcp_server", "__main__"},
]
LAYER = {name: number for number, names in enumerate(LAYERS) for name in names}
#: Only the surfaces outside workbench/ (app.py, pages/, ui.py) may import these.
FORBIDDEN = {"streamlit"}


def unit_of(path: Path, package: Path = PACKAGE) -> str:
    """``workbench/retrieve/vector.py`` -> ``retrieve``; ``workbench/ingest.py`` -> ``ingest``."""
    return path.relative_to(package).with_suffix("").parts[0]


def imported_names(path: Path, package_dir: Path = PACKAGE) -> list[tuple[int, str]]:
    """(line, absolute dotted name) of every import in a module, relative imports resolved."""
    parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
    package = parts[:-1]  # for an __init__.py the package is its own folder, which parts[:-1] also is
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = base + (node.module.split(".") if node.module else [])
            if node.module:
                names.append((node.lineno, ".".join(module)))
            else:  # from . import x: x is a module of the package
                names += [(node.lineno, ".".join(module + [alias.name])) for alias in node.names]
    return names


def violations(path: Path, package: Path = PACKAGE) -> list[str]:
    """One line per import of ``path`` that goes up the layers or to a forbidden package."""
    found = []
    unit = unit_of(path, package)
    for line, name in imported_names(path, package):
        top, *rest = name.split(".")
        where = f"{path.relative_to(package.parent)}:{line}"
        if top in FORBIDDEN:
            found.append(f"{where}: imports {name}; the core never imports {top} (use it from app.py, pages/ or ui.py)")
        elif top == "workbench" and rest and unit != "__init__":
            target = rest[0]
            if target not in LAYER:
                found.append(f"{where}: workbench.{target} has no layer; add it to LAYERS in tests/test_layers.py")
            elif LAYER[target] > LAYER[unit]:
                found.append(f"{where}: {unit} (layer {LAYER[unit]}) imports {name} (layer {LAYER[target]}), a higher layer")
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_unit_of_the_package_has_a_layer():
    units = {unit_of(p) for p in MODULES} - {"__init__"}
    assert units and units <= set(LAYER), f"no layer for: {sorted(units - set(LAYER))}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_go_down_the_layers_and_never_to_streamlit(path):
    assert violations(path) == []


def test_a_forbidden_import_is_caught(tmp_path):
    # The checker itself: a store that reaches up to retrieval, and a core module using streamlit.
    fake = tmp_path / "workbench"
    (fake / "retrieve").mkdir(parents=True)
    (fake / "store.py").write_text("from .retrieve import retrieve\nimport streamlit as st\n", encoding="utf-8")
    (fake / "retrieve" / "vector.py").write_text("from ..store import Store\nfrom . import base\n", encoding="utf-8")
    problems = violations(fake / "store.py", package=fake)
    assert len(problems) == 2
    assert "store (layer 1) imports workbench.retrieve (layer 3)" in problems[0]
    assert "never imports streamlit" in problems[1]
    assert violations(fake / "retrieve" / "vector.py", package=fake) == []
