"""The surfaces only emit: no command of workbench/cli/ and no tool of workbench/mcp_server/ builds
the payload it prints or returns. Each calls a library function and emits its typed result's
``to_json()``; a dict built in the surface (a literal, a comprehension, ``dict(...)``,
``asdict(...)``, or a list of those) is a second copy of an answer that drifts from the first.

Read with ``ast``, nothing imported. A payload is what a function hands to an emit helper (the
CLI's ``emit``, or any function of the surface that passes one of its parameters to ``emit`` or
to ``json.dumps``), what an MCP tool returns, and what a surface's own function returns when its
result is one of those; a name is followed to what it was bound to in that function."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

SURFACES = [ROOT / "workbench" / "cli", ROOT / "workbench" / "mcp_server"]
#: The emit helper every command shares (workbench/cli/render.py); the payload is its second argument.
EMIT = {"emit": 1}


def _functions(tree: ast.AST) -> dict[str, ast.FunctionDef]:
    """Every function of a module by name, nested ones included (an MCP tool is defined in build_server)."""
    return {node.name: node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _call_name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _emit_helpers(functions: dict[str, ast.FunctionDef]) -> dict[str, int]:
    """``emit`` and the surface's own functions that hand a parameter to ``emit`` or ``json.dumps``:
    name -> the position of that parameter."""
    helpers = dict(EMIT)
    for name, function in functions.items():
        params = [a.arg for a in function.args.args]
        for call in (n for n in ast.walk(function) if isinstance(n, ast.Call)):
            position = EMIT.get(_call_name(call) or "", 0 if _call_name(call) == "dumps" else None)
            if position is not None and len(call.args) > position and isinstance(call.args[position], ast.Name) \
                    and call.args[position].id in params:
                helpers[name] = params.index(call.args[position].id)
    return helpers


def _builds_dict(node: ast.AST | None) -> bool:
    """Whether ``node`` is a dict made on the spot, or a list, tuple or conditional of them."""
    if node is None:
        return False
    if isinstance(node, (ast.Dict, ast.DictComp)):
        return True
    if isinstance(node, ast.Call) and _call_name(node) in ("dict", "asdict"):
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return any(_builds_dict(e) for e in node.elts)
    if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
        return _builds_dict(node.elt)
    if isinstance(node, ast.IfExp):
        return _builds_dict(node.body) or _builds_dict(node.orelse)
    return False


def _bindings(function: ast.FunctionDef, name: str) -> list[ast.AST]:
    """What ``name`` is bound to in ``function``, and what is added to it in place (``name[k] = v``,
    ``name.append(v)``, ``name.update(v)``...), so a dict filled step by step is seen."""
    found: list[ast.AST] = []
    for node in ast.walk(function):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == name:
                    found.append(node.value)
                elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                        and target.value.id == name:
                    found.append(ast.copy_location(ast.Dict(keys=[], values=[]), node))  # filled key by key
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name) \
                and node.target.id == name and node.value is not None:
            found.append(node.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name \
                and node.func.attr in ("append", "extend", "update", "insert", "setdefault"):
            found.extend(node.args)
    return found


def _returns(function: ast.FunctionDef) -> list[ast.AST]:
    """The values ``function`` itself returns (not those of the functions nested in it)."""
    found: list[ast.AST] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, ast.Return) and child.value is not None:
                found.append(child.value)
            visit(child)

    visit(function)
    return found


def built_payloads(source: str, filename: str = "<surface>") -> list[str]:
    """``file:line function`` of every payload built in a surface module's source."""
    tree = ast.parse(source, filename=filename)
    functions = _functions(tree)
    helpers = _emit_helpers(functions)
    tools = {node.args[0].id for node in ast.walk(tree) if isinstance(node, ast.Call)
             and _call_name(node) == "add_tool" and node.args and isinstance(node.args[0], ast.Name)}
    tools |= {elt.id for node in ast.walk(tree) if isinstance(node, ast.For) and isinstance(node.iter, ast.Tuple)
              and any(isinstance(c, ast.Call) and _call_name(c) == "add_tool" for c in ast.walk(node))
              for elt in node.iter.elts if isinstance(elt, ast.Name)}
    found: list[str] = []
    seen: set[tuple[str, int]] = set()

    def check(function: ast.FunctionDef, value: ast.AST, depth: int = 0) -> None:
        if (function.name, value.lineno) in seen or depth > 5:
            return
        seen.add((function.name, value.lineno))
        if _builds_dict(value):
            found.append(f"{filename}:{value.lineno} {function.name}")
        elif isinstance(value, ast.Name):
            for bound in _bindings(function, value.id):
                check(function, bound, depth + 1)
        elif isinstance(value, ast.Call) and _call_name(value) in functions and isinstance(value.func, ast.Name):
            callee = functions[_call_name(value)]  # type: ignore[index]
            for returned in _returns(callee):
                check(callee, returned, depth + 1)

    for function in functions.values():
        for call in (n for n in ast.walk(function) if isinstance(n, ast.Call)):
            position = helpers.get(_call_name(call) or "")
            if position is not None and _call_name(call) != function.name and len(call.args) > position:
                check(function, call.args[position])
        if function.name in tools:
            for returned in _returns(function):
                check(function, returned)
    return sorted(set(found))


def _surface_files() -> list[Path]:
    return sorted(p for folder in SURFACES for p in folder.glob("*.py"))


def test_every_surface_module_is_read():
    names = {p.relative_to(ROOT).as_posix() for p in _surface_files()}
    assert {"workbench/cli/core.py", "workbench/cli/temporal.py", "workbench/mcp_server/server.py"} <= names


def test_the_payloads_are_found_where_they_are_emitted():
    # The check sees the emits and the tools it guards: counted, so an empty search fails.
    calls = tools = 0
    for path in _surface_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls += sum(1 for n in ast.walk(tree) if isinstance(n, ast.Call) and _call_name(n) in ("emit", "_say"))
        tools += sum(1 for n in ast.walk(tree) if isinstance(n, ast.Call) and _call_name(n) == "add_tool")
    assert calls >= 30 and tools >= 1


@pytest.mark.parametrize("path", _surface_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_surface_builds_a_payload(path):
    assert built_payloads(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix()) == []


PLANTED = {
    "a dict literal handed to emit": '''
def cmd_stats(args):
    ws = open_workspace(args)
    emit(args, {"documents": ws.store.count("documents")}, str)
''',
    "a name bound to a dict, then emitted": '''
def cmd_remove(args):
    removed = ws.remove(args.path)
    payload = {"removed": removed}
    emit(args, payload, str)
''',
    "a dict filled key by key": '''
def cmd_check(args):
    payload = make()
    payload["in_step"] = True
    emit(args, payload, str)
''',
    "a list of dicts": '''
def cmd_merges(args):
    emit(args, [{"canonical": m.canonical} for m in ws.merges()], str)
''',
    "asdict of a dataclass": '''
def cmd_chunk(args):
    emit(args, asdict(ws.chunk(args.chunk_id)), str)
''',
    "a dict spread over a typed result": '''
def cmd_ingest(args):
    emit(args, {**report.to_json(), "stats": ws.stats()}, str)
''',
    "an MCP tool returning a dict": '''
def build_server(ws):
    def timeline(entity):
        name, entries = entity_timeline(ws, entity)
        return {"entity": name, "entries": [e.to_json() for e in entries]}
    for tool in (timeline,):
        server.add_tool(tool)
''',
    "a helper returning the dict a tool returns": '''
def _search(ws, query):
    return {**retrieve(ws, query).to_json(), "query": query}

def build_server(ws):
    def search_chunks(query):
        return _search(ws, query)
    server.add_tool(search_chunks)
''',
    "a dict passed to a surface's own emit helper": '''
def _say(args, payload, text):
    print(json.dumps(payload))

def cmd_watch(args):
    _say(args, {"state": "stopped", "batches": 3}, "stopped")
''',
}


@pytest.mark.parametrize("source", PLANTED.values(), ids=list(PLANTED))
def test_a_planted_payload_is_caught(source):
    assert len(built_payloads(source)) == 1


def test_typed_results_pass():
    source = '''
def cmd_stats(args):
    emit(args, workspace_stats(open_workspace(args)).to_json(), lambda p: "\\n".join(f"{k}: {v}" for k, v in p.items()))

def build_server(ws):
    def timeline(entity):
        return entity_timeline(ws, entity).to_json()
    server.add_tool(timeline)
'''
    assert built_payloads(source) == []


def _mcp_call(ws, tool: str, arguments: dict) -> dict:
    """What the MCP server's ``tool`` returns to an assistant, called in this process."""
    import anyio

    from workbench.mcp_server.server import build_server

    returned = anyio.run(build_server(ws).call_tool, tool, arguments)
    assert not returned.is_error, returned.content
    return returned.structured_content


@pytest.mark.parametrize(("command", "tool", "arguments"), [
    (["timeline", "token cache"], "timeline", {"entity": "token cache"}),
    (["communities"], "communities", {}),
])
def test_the_command_line_and_the_mcp_server_emit_one_payload(sample_workspace, capsys, command, tool, arguments):
    import json

    from workbench.cli import main

    assert main(["--workspace", str(sample_workspace.path), *command, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    returned = _mcp_call(sample_workspace, tool, arguments)
    # built and kept count the last build of this process's summaries (the CLI's process read them stored)
    for payload in (printed, returned):
        payload.pop("built", None), payload.pop("kept", None)
    assert printed == returned and len(next(iter(printed.values()))) >= 3  # entries or communities, not none
