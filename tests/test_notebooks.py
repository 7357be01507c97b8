"""The notebooks: executed with nbclient on the venv's Python and the real model, checked on what
they print and display; and the committed files checked for the outputs that run gives (they
are committed with them: ``python -m workbench notebooks`` writes them) and a run time.

Notebooks 01-03 share one sample workspace (01 embeds the corpus, 02 and 03 reopen it), kept in
a temporary folder through ``WORKBENCH_NOTEBOOK_WORKSPACES`` so nothing is written to the repo;
they run exactly as ``python -m workbench notebooks`` runs them (``workbench.views.notebook_run``).
"""

from __future__ import annotations

import json
import re
import time

import nbformat
import pytest

from tests.conftest import BENCH, ROOT
from workbench.views.notebook_run import (MAX_BYTES, PLOTLY, STATIC_FIGURE, execute, leaks, notebook_environment,
                                          notebook_names, output_kinds, private_paths)

NOTEBOOKS = ROOT / "notebooks"
NAMES = ("01_quickstart", "02_compare_retrieval", "03_expansion_evaluation", "04_multihop_benchmark")
CHUNK_ID = re.compile(r"\b[0-9a-f]{16}\b")


@pytest.fixture(scope="session")
def notebook_env(tmp_path_factory):
    """The venv's Python as the kernel, and a folder for the workspaces."""
    with notebook_environment(tmp_path_factory.mktemp("notebook-workspaces"), BENCH):  # the committed slices
        yield


@pytest.fixture(scope="session")
def run_notebook(notebook_env):
    """``run_notebook(name) -> (executed notebook, seconds)``, run once per session (with the cwd
    in notebooks/, as Jupyter does); later calls reuse the result."""
    done: dict[str, tuple[nbformat.NotebookNode, float]] = {}

    def run(name: str) -> tuple[nbformat.NotebookNode, float]:
        if name not in done:
            started = time.perf_counter()
            nb = execute(NOTEBOOKS / f"{name}.ipynb")
            done[name] = (nb, time.perf_counter() - started)
        return done[name]

    return run


@pytest.fixture(scope="session")
def executed(run_notebook):
    """``executed(name)``: the executed notebook."""
    return lambda name: run_notebook(name)[0]


def stdout(nb) -> str:
    return "".join(o.text for c in nb.cells if c.cell_type == "code" for o in c.outputs
                   if o.output_type == "stream" and o.name == "stdout")


def displayed(nb, mime: str) -> list:
    return [o.data[mime] for c in nb.cells if c.cell_type == "code" for o in c.outputs
            if o.output_type in ("display_data", "execute_result") and mime in o.data]


def line_starting(text: str, prefix: str) -> str:
    lines = [line for line in text.splitlines() if line.strip().startswith(prefix)]
    assert lines, f"no line starting with {prefix!r} in:\n{text}"
    return lines[0]


# -- the committed files ------------------------------------------------------------------------

def committed(name: str):
    return nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)


def test_every_notebook_is_tested():
    assert tuple(notebook_names()) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_committed_notebook_has_the_outputs_its_code_gives(name, executed):
    """Same cells with outputs, same kinds of output (not the same bytes: timings and figures vary
    from run to run); stale outputs mean: python -m workbench notebooks."""
    nb = committed(name)
    nbformat.validate(nb)
    kinds, ran = output_kinds(nb), output_kinds(executed(name))
    assert sum(map(len, ran)) > 0
    for number, (have, want) in enumerate(zip(kinds, ran)):
        assert have == want, f"{name}, code cell {number}: committed outputs {have}, the code gives {want}"
    assert len(kinds) == len(ran)
    numbers = [cell.execution_count for cell in nb.cells if cell.cell_type == "code"]
    assert numbers == list(range(1, len(numbers) + 1)), f"{name}: not run top to bottom in one kernel"


@pytest.mark.parametrize("name", NAMES)
def test_committed_notebook_is_fit_to_browse_and_states_its_run_time(name):
    path = NOTEBOOKS / f"{name}.ipynb"
    nb = committed(name)
    first = nb.cells[0]
    assert first.cell_type == "markdown"
    assert re.search(r"\*\*Run time:\*\* about \d+ s", first.source)
    assert path.stat().st_size < MAX_BYTES
    assert leaks(nb, private_paths()) == [], f"{name}: its outputs show paths of this machine"
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not any(o.output_type == "error" or (o.output_type == "stream" and o.name == "stderr") for o in outputs)
    assert all("execution" not in cell.metadata for cell in nb.cells)  # timings change every run
    for output in outputs:
        data = output.get("data", {})
        if PLOTLY in data:
            assert data[STATIC_FIGURE].startswith("iVBORw0KGgo"), f"{name}: a plotly figure without its PNG"  # PNG magic
        assert not re.search(r"<script[^>]+src=[\"']?https?://", json.dumps(data)), f"{name}: loads a script from the network"


def test_a_notebook_that_no_longer_runs_fails(tmp_path, notebook_env):
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(f"import sys\nsys.path.insert(0, {str(ROOT)!r})\nprint('set up')"),
        nbformat.v4.new_code_cell("from workbench.bench.multihop import a_function_that_left"),  # an API that moved
        nbformat.v4.new_code_cell("print('never reached')")])
    nbformat.write(nb, tmp_path / "04_broken.ipynb")
    with pytest.raises(CellExecutionError, match="a_function_that_left"):
        execute(tmp_path / "04_broken.ipynb")


# -- 01 quickstart ------------------------------------------------------------------------------

def test_quickstart_prints_the_redis_impact_with_login_flow_and_auth_service_cited(executed):
    out = stdout(executed("01_quickstart"))
    assert re.search(r"If Redis fails, \d+ entities break:", out)
    login = line_starting(out, "login flow")
    assert "Redis → token cache → Auth Service → login flow" in login
    assert CHUNK_ID.search(login), "the impact of Redis on the login flow cites no chunk"
    assert re.search(r"Auth Service\s+2\s+Redis → token cache → Auth Service\s", out)  # two hops from Redis
    survivors = line_starting(out, "Survivors:")
    assert "search service" in survivors and "login flow" not in survivors


def test_quickstart_shows_stats_merges_and_the_auth_service_neighbourhood(executed):
    nb = executed("01_quickstart")
    out = stdout(nb)
    assert int(re.search(r"documents: (\d+)", out).group(1)) > 0
    assert re.search(r"\d+ entities within 2 hops of Auth Service", out)
    tables = "\n".join(displayed(nb, "text/plain"))
    assert "AuthService" in tables and "auth-service" in tables  # forms merged into one entity
    assert "token cache" in tables and "Identity team" in tables  # neighbours of the auth service


def test_quickstart_draws_the_graph_inline_without_the_network(executed):
    pages = [h for h in displayed(executed("01_quickstart"), "text/html") if "<iframe srcdoc=" in h]
    assert len(pages) == 1
    assert "vis.Network" in pages[0] or "vis-network" in pages[0]
    assert not re.search(r"src=&quot;https?://|href=&quot;https?://", pages[0])


# -- 02 compare ---------------------------------------------------------------------------------

def test_compare_runs_every_mode_and_graphrag_uses_the_full_graph(executed):
    from workbench.retrieve import MODES

    nb = executed("02_compare_retrieval")
    out = stdout(nb)
    for mode in MODES:
        assert re.search(rf"^\s*{mode} -> used [\w-]+\s+\d+ hits", out, re.MULTILINE), f"no line for mode {mode}"
    assert "mode used: full_graphrag" in out
    assert int(re.search(r"top entities: (\d+)", out).group(1)) > 0
    assert re.search(r"seeds: Redis \(named, 0\.\d\d\)", out)
    assert re.search(r"cited path: Redis → token cache → Auth Service → login flow \(corroboration \d\)", out)
    # The top hit's why, as a sentence and as JSON.
    assert re.search(r"^why: (Fused by RRF \(0\.\d{3}\)|States hop \d of the path Redis → )", out, re.MULTILINE)
    assert '"walk_rank": ' in out and '"similarity": ' in out
    side_by_side = next(t for t in displayed(nb, "text/html") if "rank" in t and all(m in t for m in MODES))
    assert "★" in side_by_side


def test_compare_shows_the_assembled_context_with_citations(executed):
    markdown = displayed(executed("02_compare_retrieval"), "text/markdown")
    assert len(markdown) == 1
    assert markdown[0].startswith("# Question\n\nIf Redis goes down, what breaks?")
    assert "## Sources (full_graphrag)" in markdown[0]
    assert re.search(r"token cache -backed_by-> Redis \[[0-9a-f]{16}\]", markdown[0])


# -- 03 evaluation ------------------------------------------------------------------------------

def test_evaluation_prints_a_summary_with_confidence_intervals_per_strategy(executed):
    nb = executed("03_expansion_evaluation")
    out = stdout(nb)
    header = line_starting(out, "strategy  tasks")
    for column in ("recall", "d_recall", "d_recall_low", "d_recall_high", "recall_w/t/l", "d_ndcg_low"):
        assert column in header.split()
    for strategy in ("direct", "expand", "graphrag"):
        row = line_starting(out, f"{strategy} ").split()
        low, high = (float(row[header.split().index(c)]) for c in ("d_recall_low", "d_recall_high"))
        assert low <= high
    assert "Expansion found a prerequisite" in out
    assert len(displayed(nb, PLOTLY)) == 3


def test_evaluation_loads_and_resolves_a_task_file_written_in_the_notebook(executed):
    out = stdout(executed("03_expansion_evaluation"))
    assert "redis-failover-steps: resolved gold: ['sample_corpus/runbooks/redis-failover.md']" in out
    assert re.search(r"^\s*graphrag\s+2\s", out, re.MULTILINE)  # the two-task run's summary


# -- 04 benchmark -------------------------------------------------------------------------------

def test_benchmark_prints_recall_for_every_mode_on_the_subset(executed):
    from workbench.bench.multihop import available_modes

    nb = executed("04_multihop_benchmark")
    out = stdout(nb)
    assert re.search(r"musique: 20 questions, \d+ passages", out)
    for mode in available_modes():
        row = line_starting(out, f"{mode} ").split()
        assert 0 <= float(row[1]) <= 100 and 0 <= float(row[2]) <= 100, row
    report = json.loads(out[out.index('{\n "dataset"'):])  # the last cell prints the report's JSON
    assert report["questions"] == 20 and report["passages"] < 200
    assert list(report["results"]) == available_modes()
    assert all(r["recall@5"] >= r["recall@2"] for r in report["results"].values())


def test_benchmark_draws_the_ablation_chart_of_r2_and_r5_per_mode(executed):
    from workbench.bench.multihop import available_modes

    charts = displayed(executed("04_multihop_benchmark"), PLOTLY)
    assert len(charts) == 1
    bars = charts[0]["data"]
    assert [b["name"] for b in bars] == ["R@2", "R@5"]
    assert list(bars[0]["x"]) == available_modes()
