"""A command starts with only its own module's imports: ``ingest`` reads its line with a parser
that holds the commands up to its own, and never imports the retrievers or the benchmarks for it;
every line is read by that parser as the whole one reads it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT
from workbench.cli import build_parser, command_named


def _commands(parser) -> dict:
    """Command name -> its parser."""
    (action,) = [a for a in parser._actions if a.dest == "command"]
    return action.choices


@pytest.mark.parametrize("argv, named", [
    (["ingest", "notes"], "ingest"),
    (["--workspace", "stats", "--json", "ingest", "notes"], "ingest"),  # an option's value is no command
    (["--work=w", "--settings", "s.yaml", "query", "--mode", "vector", "x"], "query"),
    (["ingest", "-h"], "ingest"),
    (["-h", "ingest"], None),  # the help of every command
    (["--workspace"], None),  # a mistake: the whole parser says what is wrong
    (["--", "ingest"], None),
    ([], None),
])
def test_the_command_word_is_found_past_the_shared_options(argv, named):
    assert command_named(argv) == named


def test_each_command_is_read_by_its_short_parser_as_by_the_whole_one():
    whole = _commands(build_parser(prog="wb"))
    assert len(whole) > 20 and {"ingest", "query", "docs"} <= set(whole)
    for name, parser in whole.items():
        short = build_parser(prog="wb", command=name)
        assert _commands(short)[name].format_help() == parser.format_help(), name
    lines = [["--workspace", "w", "ingest", "a", "b", "--json"], ["query", "x", "-k", "3", "--mode", "vector"],
             ["--json", "path", "A", "B", "--max-hops", "2"], ["docs", "--check"]]
    for argv in lines:
        assert vars(build_parser(command=command_named(argv)).parse_args(argv)) == vars(build_parser().parse_args(argv))


def test_a_short_parser_holds_only_the_commands_up_to_its_own():
    assert set(_commands(build_parser(command="ingest"))) < set(_commands(build_parser()))
    assert set(_commands(build_parser(command="no-such-command"))) == set(_commands(build_parser()))


def test_ingest_starts_without_the_retrievers_the_benchmarks_or_chroma():
    probe = ("import sys; from workbench.cli import build_parser, command_named; "
             "build_parser(command=command_named(['--workspace', 'w', 'ingest', 'notes'])); "
             "print(' '.join(sorted(sys.modules)))")
    loaded = set(subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                                check=True).stdout.split())
    assert "workbench.cli.core" in loaded
    heavy = {"workbench.retrieve", "workbench.bench", "workbench.evaluate", "workbench.cli.retrieval",
             "workbench.cli.benchmarks", "chromadb", "scipy", "networkx", "torch"}
    assert loaded & heavy == set()
