"""Settings are the only place a default lives.

A public function, method or dataclass of the core that offers a value the settings own either
takes it without a default (options objects are built from their settings section), or takes
``setting_default("section.field")``, which reads the settings model's own default. A literal or
a constant of its own that equals a setting's default, under the setting's name, is a second
place for that default, and it drifts: this test names each one. Module constants named after a
setting (``DEFAULT_SUPPORT_THRESHOLD``) that restate its default are caught the same way.

A parameter stands for a setting when it has the setting's name, or the setting's name ends with
``_<parameter>`` or starts with ``<parameter>_`` (``threshold`` -> ``suggest_threshold``,
``gap_minutes`` -> ``session_gap_minutes``, ``timeout`` -> ``timeout_seconds``, ``k`` ->
``rrf_k``), or through :data:`ALIASES`.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import pkgutil
import textwrap
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import BaseModel

import workbench
from workbench.settings import Settings

from tests.conftest import ROOT

#: Parameter names that stand for a setting of another name.
ALIASES = {"alpha": ("ppr_damping",), "tokens_per_batch": ("batch_tokens",), "max_hops": ("max_path_hops",),
           "k": ("max_paths",)}

#: (qualified name of the callable, parameter) -> why that parameter is not the setting it is
#: named like. Each entry says which value it is instead.
NOT_THE_SETTING = {
    ("workbench.embedding.local_model.LocalModelServer.__init__", "host"): "the llama.cpp server's address, not Chroma's",
    ("workbench.embedding.local_model.free_port", "host"): "the llama.cpp server's address, not Chroma's",
    ("workbench.embedding.local_model.server_command", "host"): "the llama.cpp server's address, not Chroma's",
    ("workbench.context_graph.graph.ContextGraph.neighbors", "hops"): "a neighbourhood's depth, not the comention mode's walk",
    ("workbench.context_graph.graph_questions.neighborhood", "hops"): "a neighbourhood's depth, not the comention mode's walk",
    ("workbench.mcp_server.server.MAX_HOPS", "MAX_HOPS"): "the deepest neighbourhood an agent may ask for, not a path's length",
}

def settings_defaults() -> dict[str, list[tuple[str, Any]]]:
    """Field name -> [("section.field", default)] for every setting with a default that is not None."""
    found: dict[str, list[tuple[str, Any]]] = {}
    for section, info in Settings.model_fields.items():
        model = info.annotation
        assert isinstance(model, type) and issubclass(model, BaseModel)
        for name, field in model.model_fields.items():
            default = field.get_default(call_default_factory=True)
            if default is not None:
                found.setdefault(name, []).append((f"{section}.{name}", default))
    return found


DEFAULTS = settings_defaults()


def same_value(value: Any, default: Any) -> bool:
    """``value`` restates ``default``: equal, of the same kind (``True`` is not ``1``, a tuple
    restates a list)."""
    if isinstance(value, bool) or isinstance(default, bool):
        return isinstance(value, bool) and isinstance(default, bool) and value == default
    if isinstance(value, tuple | frozenset | set):
        value = list(value) if isinstance(value, tuple) else sorted(value)
        default = sorted(default) if isinstance(default, list) and not isinstance(value, list) else default
    if isinstance(default, str) != isinstance(value, str):
        return False
    try:
        return bool(value == default)
    except Exception:  # an array or another value without a plain ==
        return False


def settings_named(name: str) -> list[tuple[str, Any]]:
    """The settings a parameter or constant called ``name`` stands for."""
    name = name.lower()
    found = []
    for field, entries in DEFAULTS.items():
        if field == name or field.endswith("_" + name) or field.startswith(name + "_") \
                or field in ALIASES.get(name, ()) or name.endswith("_" + field):
            found += entries
    return found


def core_modules() -> list[Any]:
    """Every module of workbench/ except the settings (the one place defaults live)."""
    names = sorted(m.name for m in pkgutil.walk_packages(workbench.__path__, "workbench.")
                   if not m.name.startswith("workbench.settings"))
    return [importlib.import_module(name) for name in names]


def public_callables(module: Any) -> Iterator[tuple[str, Any]]:
    """(qualified name, object) of the public functions, classes, their ``__init__`` and public
    methods defined in ``module``."""
    for name, obj in sorted(vars(module).items()):
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue
        where = f"{module.__name__}.{name}"
        if inspect.isfunction(obj):
            yield where, obj
        elif inspect.isclass(obj):
            yield where, obj
            members = vars(obj)
            if "__init__" in members and not dataclasses.is_dataclass(obj) and inspect.isfunction(members["__init__"]):
                yield f"{where}.__init__", members["__init__"]
            for member_name, member in sorted(members.items()):
                member = getattr(member, "__func__", member)  # staticmethod, classmethod
                if not member_name.startswith("_") and inspect.isfunction(member):
                    yield f"{where}.{member_name}", member


def defaults_of(obj: Any) -> dict[str, Any]:
    """Parameter (or dataclass field) -> its default value."""
    if inspect.isclass(obj):
        if not dataclasses.is_dataclass(obj):
            return {}
        return {f.name: f.default for f in dataclasses.fields(obj) if f.default is not dataclasses.MISSING}
    return {p.name: p.default for p in inspect.signature(obj).parameters.values() if p.default is not p.empty}


def default_expressions(obj: Any) -> dict[str, ast.expr]:
    """Parameter (or dataclass field) -> the expression its default is written as."""
    node = ast.parse(textwrap.dedent(inspect.getsource(obj))).body[0]
    if isinstance(node, ast.ClassDef):
        found = {}
        for statement in node.body:
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value:
                value = statement.value
                if isinstance(value, ast.Call) and _called(value) == "field":  # field(default=...)
                    value = next((k.value for k in value.keywords if k.arg == "default"), value)
                found[statement.target.id] = value
        return found
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    arguments = node.args
    positional = arguments.posonlyargs + arguments.args
    found = {a.arg: d for a, d in zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults)}
    found.update({a.arg: d for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None})
    return found


def _called(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def constants_the_settings_take() -> set[tuple[str, str]]:
    """(module, name) of each constant a setting's default is made from: a constant of the ground
    floor, which imports no settings, is the one statement of a default the settings model reads
    (``articles: list[str] = Field(default_factory=lambda: list(DEFAULT_ARTICLES))``)."""
    import workbench.settings as settings_module
    tree = ast.parse(inspect.getsource(settings_module))
    imported = {(a.asname or a.name): (importlib.import_module("." * s.level + (s.module or ""), "workbench.settings").__name__, a.name)
                for s in tree.body if isinstance(s, ast.ImportFrom) for a in s.names}
    taken = set()
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and _called(call) == "Field":
            for keyword in call.keywords:
                if keyword.arg in ("default", "default_factory"):
                    taken |= {imported[n.id] for n in ast.walk(keyword.value) if isinstance(n, ast.Name) and n.id in imported}
    return taken


def reads_the_settings(expression: ast.expr | None, module: Any) -> bool:
    """The default is ``setting_default("...")``, the settings model's own value, a constant the
    settings model takes its default from, or a constant of ``module`` (or one it imports from the
    package) assigned from either."""
    if isinstance(expression, ast.Name) and (module.__name__, expression.id) in SETTINGS_SOURCES:
        return True
    if isinstance(expression, ast.Call):
        if _called(expression) in {"tuple", "frozenset"} and len(expression.args) == 1:  # tuple(setting_default(...))
            return reads_the_settings(expression.args[0], module)
        return _called(expression) == "setting_default"
    if not isinstance(expression, ast.Name):
        return False
    for statement in ast.parse(inspect.getsource(module)).body:
        if isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value is not None and any(
                isinstance(t, ast.Name) and t.id == expression.id
                for t in (statement.targets if isinstance(statement, ast.Assign) else [statement.target])):
            return reads_the_settings(statement.value, module)
        if isinstance(statement, ast.ImportFrom) and any((a.asname or a.name) == expression.id for a in statement.names):
            source = importlib.import_module(statement.module or "", module.__package__) if not statement.level \
                else importlib.import_module("." * statement.level + (statement.module or ""), module.__package__)
            original = next(a.name for a in statement.names if (a.asname or a.name) == expression.id)
            return reads_the_settings(ast.Name(original), source)
    return False


def restated_defaults(modules: list[Any], skip: Callable[[str, str], bool] = lambda where, name: False) -> list[str]:
    """One line per public signature or dataclass field of ``modules`` that restates a setting's default."""
    found = []
    for module in modules:
        for where, obj in public_callables(module):
            values = defaults_of(obj)
            matches = {name: [key for key, default in settings_named(name) if same_value(value, default)]
                       for name, value in values.items()}
            matches = {name: keys for name, keys in matches.items() if keys and not skip(where, name)}
            if not matches:
                continue
            written = default_expressions(obj)
            for name, keys in sorted(matches.items()):
                if not reads_the_settings(written.get(name), module):
                    found.append(f"{where}: {name}={values[name]!r} restates the default of {', '.join(keys)}; "
                                 f"take setting_default({keys[0]!r}) or no default")
    return found


def restated_constants(modules: list[Any], skip: Callable[[str, str], bool] = lambda where, name: False) -> list[str]:
    """One line per module constant named after a setting whose literal value restates its default."""
    found = []
    for module in modules:
        tree = ast.parse(inspect.getsource(module))
        for statement in tree.body:
            targets = statement.targets if isinstance(statement, ast.Assign) else \
                [statement.target] if isinstance(statement, ast.AnnAssign) and statement.value else []
            for target in targets:
                if not (isinstance(target, ast.Name) and target.id.lstrip("_").isupper()) \
                        or skip(f"{module.__name__}.{target.id}", target.id) \
                        or (module.__name__, target.id) in SETTINGS_SOURCES:  # the statement the settings read
                    continue
                try:
                    value = ast.literal_eval(statement.value)
                except ValueError:
                    continue  # computed (from setting_default, or from anything else)
                keys = [key for key, default in settings_named(target.id.lstrip("_")) if same_value(value, default)]
                if keys:
                    found.append(f"{module.__name__}.{target.id}: {target.id}={value!r} restates the default of "
                                 f"{', '.join(keys)}; take setting_default({keys[0]!r})")
    return found


MODULES = core_modules()
SETTINGS_SOURCES = constants_the_settings_take()


def excused(where: str, name: str) -> bool:
    return (where, name) in NOT_THE_SETTING


def test_no_public_signature_restates_a_default_the_settings_own():
    assert len(MODULES) > 100  # the walk read the package
    assert restated_defaults(MODULES, skip=excused) == []


def test_no_module_constant_restates_a_default_the_settings_own():
    assert restated_constants(MODULES, skip=excused) == []


def test_the_excused_entries_still_name_a_restatement():
    # An entry whose restatement is gone is deleted from the list.
    everything = restated_defaults(MODULES) + restated_constants(MODULES)
    assert {(line.split(": ")[0], line.split(": ")[1].split("=")[0]) for line in everything} == \
        set(NOT_THE_SETTING)


@pytest.mark.parametrize("source", [
    "def run(graph, alpha: float = 0.85):\n    pass\n",
    "def fuse(a, b, *, rrf_k=60):\n    pass\n",
    "from dataclasses import dataclass\n@dataclass\nclass Options:\n    min_size: int = 3\n",
    "THRESHOLD = 0.85\ndef suggest(names, threshold=THRESHOLD):\n    pass\n",
])
def test_a_planted_restatement_is_caught(tmp_path, monkeypatch, source):
    (tmp_path / "planted_defaults.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("planted_defaults")
    try:
        (problem,) = restated_defaults([module])
    finally:
        del importlib.sys.modules["planted_defaults"]
    assert "restates the default of" in problem


def test_a_default_read_from_the_settings_is_not_a_restatement(tmp_path, monkeypatch):
    source = ("from workbench.settings import setting_default\n"
              "DEFAULT_SUPPORT_THRESHOLD = setting_default('answers.support_threshold')\n"
              "def run(graph, alpha: float = setting_default('graphrag.ppr_damping'), threshold=DEFAULT_SUPPORT_THRESHOLD):\n"
              "    pass\n")
    (tmp_path / "settled_defaults.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("settled_defaults")
    try:
        assert restated_defaults([module]) == [] and restated_constants([module]) == []
    finally:
        del importlib.sys.modules["settled_defaults"]


def test_a_planted_constant_is_caught(tmp_path, monkeypatch):
    (tmp_path / "planted_constant.py").write_text("DEFAULT_SUPPORT_THRESHOLD = 0.6\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("planted_constant")
    try:
        (problem,) = restated_constants([module])
    finally:
        del importlib.sys.modules["planted_constant"]
    assert "answers.support_threshold" in problem


def test_the_settings_file_states_every_default_it_owns():
    assert (ROOT / "workbench" / "settings" / "__init__.py").exists() and DEFAULTS["ppr_damping"] == [("graphrag.ppr_damping", 0.85)]
