"""The direction of the imports inside workbench/: data flows one way, no module reaches itself
through others, and the core never imports streamlit. Every module of the package is read with
``ast`` (nothing is imported); imports inside functions count, since they are where circles hide."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "workbench"

#: Lowest first, one entry per package of workbench/: a module may import its own package and
#: the packages of the layers below, never one above (STYLE.md's map). Data flows one way:
#: files -> chunks -> mentions and triples -> graph and vectors -> retrieval -> answers -> views.
#: app.py, pages/, ui.py and ui_widgets.py sit above all of these, outside the package.
LAYERS = [
    {"text", "runtime"},  # safe text and YAML, sentences, name keys; atomic array files, threads, progress
    {"settings", "model"},  # the one settings model; the dataclasses passed between layers
    {"embedding"},  # one protocol, its backends and the installable models
    {"record", "vectors"},  # the SQLite record; the Chroma store and the vector files beside it
    {"ingest", "extract"},  # files -> documents -> chunks; chunks -> mentions and triples
    {"context_graph"},  # canon, assembly, passages, the persisted graph, PageRank, graph questions
    {"corpus"},  # corpus-wide views, and the WorkspaceView protocol every reader asks
    {"workspace"},  # the object a user opens, and its write step
    {"retrieve"},
    {"answer"},  # answer material with citations, the optional LLM call, the answer checks
    {"evaluate", "views"},
    {"bench"},
    {"cli", "mcp_server"},
]
#: Only the surfaces outside workbench/ (app.py, pages/, ui.py, ui_widgets.py) may import these.
FORBIDDEN = {"streamlit"}


def layer_map(layers: list[set[str]] = LAYERS) -> dict[str, int]:
    return {name: number for number, names in enumerate(layers) for name in names}


LAYER = layer_map()


def unit_of_name(parts: list[str]) -> str:
    """``["retrieve", "vector"]`` -> ``retrieve``: a unit is a package of workbench/."""
    return parts[0]


def unit_of(path: Path, package: Path = PACKAGE) -> str:
    """``workbench/retrieve/vector.py`` -> ``retrieve``; workbench's own ``__init__`` and
    ``__main__`` -> ``__init__`` (the package itself, which may import any layer)."""
    parts = list(path.relative_to(package).with_suffix("").parts)
    return "__init__" if len(parts) == 1 and parts[0] in ("__init__", "__main__") else unit_of_name(parts)


def module_name(path: Path, package: Path = PACKAGE) -> str:
    """``workbench/retrieve/__init__.py`` -> ``workbench.retrieve``."""
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(path: Path, package_dir: Path = PACKAGE) -> list[tuple[int, str]]:
    """(line, absolute dotted name) of every import in a module, relative imports resolved;
    ``from m import x`` gives ``m.x`` (x a module of m, or a name m holds)."""
    parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
    package = parts[:-1]  # for an __init__.py the package is its own folder, which parts[:-1] also is
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = base + (node.module.split(".") if node.module else [])
            # from m import x: x may be a module of m (import_graph keeps the longest module)
            names += [(node.lineno, ".".join(module + [alias.name])) for alias in node.names]
    return names


def violations(path: Path, package: Path = PACKAGE, layer: dict[str, int] = LAYER) -> list[str]:
    """One line per import of ``path`` that goes up the layers or to a forbidden package."""
    found = []
    unit = unit_of(path, package)
    top_package = package.name
    for line, name in imported_names(path, package):
        top, *rest = name.split(".")
        where = f"{path.relative_to(package.parent)}:{line}"
        if top in FORBIDDEN:
            found.append(f"{where}: imports {name}; the core never imports {top} (use it from app.py, pages/, ui.py or ui_widgets.py)")
        elif top == top_package and rest and unit != "__init__":
            target = unit_of_name(rest)
            if target not in layer:
                found.append(f"{where}: {top_package}.{target} has no layer; add it to LAYERS in tests/test_layers.py")
            elif layer[target] > layer[unit]:
                found.append(f"{where}: {unit} (layer {layer[unit]}) imports {name} (layer {layer[target]}), a higher layer")
    return found


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules of the package it imports. ``from .x import y`` is an edge to the
    module ``x``; ``from . import y`` to the module ``y`` if there is one, else to the package."""
    paths = sorted(package.rglob("*.py"))
    modules = {module_name(p, package) for p in paths}
    graph: dict[str, set[str]] = {}
    for path in paths:
        edges = graph.setdefault(module_name(path, package), set())
        for _, name in imported_names(path, package):
            parts = name.split(".")
            while parts and ".".join(parts) not in modules:
                parts.pop()  # an imported name, not a module: its module is the edge
            if parts:
                edges.add(".".join(parts))
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle: the strongly connected components of more than one module, or of a
    module that imports itself, each sorted (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph.get(node, ()):
                    found.append(sorted(component))
    return sorted(found)


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_unit_of_the_package_has_a_layer():
    units = {unit_of(p) for p in MODULES} - {"__init__"}
    assert units and units <= set(LAYER), f"no layer for: {sorted(units - set(LAYER))}"


def test_every_unit_is_a_package_named_once():
    # No module-sized exceptions: a unit is a folder of workbench/, and each sits in one layer.
    names = [name for layer in LAYERS for name in layer]
    assert len(names) == len(set(names)) and all((PACKAGE / name / "__init__.py").is_file() for name in names)
    assert {p.name for p in PACKAGE.iterdir() if p.suffix == ".py"} == {"__init__.py", "__main__.py"}


def test_the_core_runs_retrieve_answer_evaluate_bench_in_that_order():
    assert LAYER["text"] < LAYER["settings"] < LAYER["ingest"] <= LAYER["extract"] < LAYER["context_graph"] \
        < LAYER["corpus"] < LAYER["retrieve"] < LAYER["answer"] < LAYER["evaluate"] <= LAYER["views"] \
        < LAYER["bench"] < LAYER["cli"]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_go_down_the_layers_and_never_to_streamlit(path):
    assert violations(path) == []


def test_no_module_imports_itself_through_others():
    graph = import_graph()
    assert len(graph) == len(MODULES) and graph["workbench.retrieve"]  # the walk read the package
    assert circles(graph) == []


def _plant(root: Path, files: dict[str, str]) -> Path:
    """A tiny package ``workbench/`` under ``root`` holding ``files`` (path -> source)."""
    fake = root / "workbench"
    for name, source in files.items():
        path = fake / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    return fake


def test_a_forbidden_import_is_caught(tmp_path):
    # The checker itself: the record reaching up to retrieval, and a core module using streamlit.
    fake = _plant(tmp_path, {"record/store.py": "from ..retrieve import retrieve\nimport streamlit as st\n",
                             "retrieve/__init__.py": "",
                             "retrieve/vector.py": "from ..record.store import Store\nfrom . import base\n"})
    problems = violations(fake / "record" / "store.py", package=fake)
    assert len(problems) == 2
    assert "record (layer 3) imports workbench.retrieve.retrieve (layer 8)" in problems[0]
    assert "never imports streamlit" in problems[1]
    assert violations(fake / "retrieve" / "vector.py", package=fake) == []


@pytest.mark.parametrize("source, upward", [("retrieve/paths.py", "from ..answer.material import build_context\n"),
                                            ("answer/material.py", "def late():\n    from ..evaluate.runner import EvalRun\n"),
                                            ("evaluate/runner.py", "from ..bench import perf\n"),
                                            ("text/name_keys.py", "from ..settings import setting_default\n"),
                                            ("ingest/loaders.py", "from ..workspace.ingest_pipeline import ingest_paths\n"),
                                            ("context_graph/graph_questions.py",
                                             "if TYPE_CHECKING:\n    from ..corpus.workspace_view import WorkspaceView\n")])
def test_a_planted_upward_import_inside_the_core_is_caught(tmp_path, source, upward):
    # Type-only and function-local imports count: a layer is what a module may know of.
    fake = _plant(tmp_path, {source: upward})
    (problem,) = violations(fake / source, package=fake)
    assert "a higher layer" in problem


def test_an_unknown_package_is_named(tmp_path):
    fake = _plant(tmp_path, {"retrieve/vector.py": "from ..helpers import tidy\n"})
    (problem,) = violations(fake / "retrieve" / "vector.py", package=fake)
    assert "workbench.helpers has no layer" in problem


def test_a_planted_circle_is_caught_inside_one_layer_and_through_a_lazy_import(tmp_path):
    fake = _plant(tmp_path, {
        "__init__.py": "",
        "retrieve/__init__.py": "from .vector import VectorRetriever\n",
        "retrieve/vector.py": "from .base import Retriever\n",
        "retrieve/base.py": "def register():\n    from . import vector\n",  # a lazy import closes the circle
        "record/store.py": "def factory():\n    from ..vectors.index import VectorIndex\n",
        "vectors/index.py": "from ..record.store import Store\n",
        "model/__init__.py": "",
    })
    assert circles(import_graph(fake)) == [["workbench.record.store", "workbench.vectors.index"],
                                           ["workbench.retrieve.base", "workbench.retrieve.vector"]]
    # Every one of those imports goes down or stays in its layer: only the circle check sees them.
    assert all(violations(p, package=fake) == [] for p in fake.rglob("*.py"))


def test_registering_through_the_package_is_a_circle(tmp_path):
    # What retrieve/global_search.py once did: the package imports the module, which imports the package.
    fake = _plant(tmp_path, {"retrieve/__init__.py": "from . import global_search\ndef register(r):\n    pass\n",
                             "retrieve/global_search.py": "from . import register\nregister(object())\n"})
    assert circles(import_graph(fake)) == [["workbench.retrieve", "workbench.retrieve.global_search"]]


def test_a_module_that_imports_itself_is_a_circle(tmp_path):
    fake = _plant(tmp_path, {"record/store.py": "from . import store\n"})
    assert circles(import_graph(fake)) == [["workbench.record.store"]]


def test_a_planted_circle_between_two_packages_is_caught(tmp_path):
    fake = _plant(tmp_path, {"context_graph/__init__.py": "", "corpus/__init__.py": "",
                             "context_graph/graph.py": "def late():\n    from ..corpus.communities import detect\n",
                             "corpus/communities.py": "from ..context_graph.graph import ContextGraph\n"})
    assert circles(import_graph(fake)) == [["workbench.context_graph.graph", "workbench.corpus.communities"]]
