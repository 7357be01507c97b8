"""Run the notebooks of ``notebooks/`` and keep their outputs.

The notebooks are committed with their outputs, so a reader browsing them on a forge sees what
they show. ``python -m workbench notebooks`` writes those outputs and ``tests/test_notebooks.py``
executes the notebooks the same way (:func:`notebook_environment`, :func:`execute`), so the suite
fails when a notebook no longer runs, and when the committed outputs are no longer the kinds its
code gives (:func:`output_kinds`).

A run uses this very Python as the kernel, fresh workspaces in a temporary folder and the
benchmark slices committed in ``tests/data/bench/``, so it needs nothing outside the checkout.
Before a notebook is written, what changes every run and says nothing is dropped (cell timings,
warnings on stderr), each plotly figure gets a PNG beside it (a forge shows the PNG; Jupyter the
interactive figure) and the outputs are checked for paths of this machine (:func:`leaks`).

``nbclient``, ``nbformat`` and ``kaleido`` (the PNGs) are test and development dependencies
(``requirements-dev.txt``): they are imported where used.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .notebooks import BENCH_ENV, REPO_ROOT, WORKSPACES_ENV

__all__ = ["NOTEBOOKS_DIR", "BENCH_SLICES", "KERNEL", "PLOTLY", "STATIC_FIGURE", "MAX_BYTES", "NotebookWritten",
           "notebook_names", "notebook_environment", "execute", "output_kinds", "add_static_figures", "settle",
           "leaks", "private_paths", "regenerate", "NotebookUnfit", "NotebookFailed"]

NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
#: The small benchmark sets the notebooks run on here (not ``../shared/bench``).
BENCH_SLICES = REPO_ROOT / "tests" / "data" / "bench"
#: The kernel the notebooks run on: this very Python, through a kernelspec written for the run.
KERNEL = "workbench-venv"
PLOTLY = "application/vnd.plotly.v1+json"
#: The static picture kept beside each plotly figure.
STATIC_FIGURE = "image/png"
#: A committed notebook larger than this is too large to browse.
MAX_BYTES = 2_000_000
#: The picture's size when the figure does not give one (pixels).
FIGURE_SIZE = (900, 500)


def notebook_names(folder: Path = NOTEBOOKS_DIR) -> list[str]:
    """The notebooks of ``folder`` (``01_quickstart``, ...), in order.

    >>> notebook_names()[0]
    '01_quickstart'
    """
    return sorted(path.stem for path in folder.glob("[0-9][0-9]_*.ipynb"))


@contextmanager
def notebook_environment(workspaces: Path, bench_data: Path = BENCH_SLICES) -> Iterator[None]:
    """Inside it, :func:`execute` runs notebooks on this Python, with their workspaces under
    ``workspaces`` and the benchmark sets read from ``bench_data``; the environment is restored
    on the way out."""
    names = ("JUPYTER_PATH", WORKSPACES_ENV, BENCH_ENV)
    saved = {name: os.environ.get(name) for name in names}
    with tempfile.TemporaryDirectory(prefix="workbench-kernel-") as jupyter_path:
        spec = Path(jupyter_path) / "kernels" / KERNEL
        spec.mkdir(parents=True)
        (spec / "kernel.json").write_text(json.dumps({
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "workbench venv", "language": "python",
        }), encoding="utf-8")
        os.environ.update({"JUPYTER_PATH": jupyter_path, WORKSPACES_ENV: str(workspaces), BENCH_ENV: str(bench_data)})
        try:
            yield
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def execute(path: Path, timeout: int = 300) -> Any:
    """The notebook at ``path`` executed (a new ``NotebookNode``; the file is not written), with
    the working directory in its folder, as Jupyter starts it. Call inside
    :func:`notebook_environment`.

    Raises
    ------
    nbclient.exceptions.CellExecutionError
        A cell raised: the message shows the cell and its traceback.
    """
    import nbformat

    nb = nbformat.read(path, as_version=4)
    _execute_in_place(nb, path.parent, timeout)
    return nb


def _execute_in_place(nb, folder: Path, timeout: int = 300) -> None:
    from nbclient import NotebookClient

    NotebookClient(nb, timeout=timeout, kernel_name=KERNEL, resources={"metadata": {"path": str(folder)}}).execute()


class NotebookFailed(RuntimeError):
    """A cell of a notebook raised: the notebook no longer runs."""


def _failure(path: Path, nb, exc) -> NotebookFailed:
    """What failed, in a line: the notebook, the cell (its number among the code cells, its first
    line) and the error."""
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    failed = next(((number, cell) for number, cell in enumerate(code, 1)
                   if any(o.output_type == "error" for o in cell.outputs)), None)
    where = f"code cell {failed[0]} ({failed[1].source.strip().splitlines()[0]!r})" if failed else "a cell"
    return NotebookFailed(f"{path} no longer runs: {where} raised {exc.ename}: {exc.evalue}")


def _kind(output) -> tuple[str, ...]:
    if output.output_type == "stream":
        return ("stream", output.name)
    if output.output_type == "error":
        return ("error", output.ename)
    mimes = set(output.get("data", {}))
    if PLOTLY in mimes:
        mimes.discard(STATIC_FIGURE)  # added when the notebook is written, not by its code
    return (output.output_type, *sorted(mimes))


def output_kinds(nb) -> list[list[tuple[str, ...]]]:
    """Per code cell, the kinds of its outputs: ``("stream", "stdout")``, or the output type and
    its MIME types (``("execute_result", "text/html", "text/plain")``). Warnings on stderr are left
    out, runs of one stream count once (how a stream is cut into outputs depends on timing), and a
    figure's static picture is left out: two runs of the same code give the same kinds.
    """
    kinds = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        cell_kinds: list[tuple[str, ...]] = []
        for output in cell.outputs:
            kind = _kind(output)
            if kind != ("stream", "stderr") and (not cell_kinds or kind != cell_kinds[-1] or kind[0] != "stream"):
                cell_kinds.append(kind)
        kinds.append(cell_kinds)
    return kinds


class NotebookUnfit(ValueError):
    """A notebook ran but its outputs cannot be committed (a private path, too large, a figure
    that cannot be drawn)."""


def add_static_figures(nb) -> int:
    """Put a PNG of each plotly figure beside it, drawn by kaleido (with the Chromium on this
    machine); returns how many. A forge cannot run plotly, so the PNG is what it shows.

    Raises
    ------
    NotebookUnfit
        No Chrome or Chromium to draw with.
    """
    import base64

    import kaleido
    import plotly.io as pio

    figures = [output for cell in nb.cells if cell.cell_type == "code" for output in cell.outputs
               if PLOTLY in output.get("data", {})]
    if not figures:
        return 0
    kaleido.start_sync_server()  # one browser for every figure, not one each
    try:
        for output in figures:
            spec = {key: value for key, value in output.data[PLOTLY].items() if key in ("data", "layout")}
            layout = spec.get("layout", {})
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)  # "kopts is ignored with a server": there are none
                    png = pio.to_image(spec, format="png", width=layout.get("width") or FIGURE_SIZE[0],
                                       height=layout.get("height") or FIGURE_SIZE[1])
            except RuntimeError as exc:  # plotly's word for "kaleido found no Chrome or Chromium"
                raise NotebookUnfit(f"the PNG of a plotly figure cannot be drawn: {exc}") from exc
            output.data[STATIC_FIGURE] = base64.b64encode(png).decode("ascii")
    finally:
        kaleido.stop_sync_server()
    return len(figures)


def settle(nb, metadata: dict | None = None) -> Any:
    """``nb`` without what changes every run and says nothing: each cell's execution timings,
    warnings on stderr, the cuts in a stream of printed text (one output per run of a stream); the
    notebook's metadata set back to ``metadata`` (the committed one)."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        cell.metadata.pop("execution", None)
        outputs: list = []
        for output in cell.outputs:
            if output.output_type == "stream" and output.name == "stderr":
                continue
            if output.output_type == "stream" and outputs and outputs[-1].output_type == "stream":
                outputs[-1].text += output.text
            else:
                outputs.append(output)
        cell.outputs = outputs
    if metadata is not None:
        nb.metadata = metadata
    return nb


def private_paths(*extra: Path) -> list[str]:
    """Paths of this machine that must not be shown in a committed notebook: the checkout, the
    virtualenv, the home folder, the temporary folder, and ``extra``."""
    paths = [REPO_ROOT, Path(sys.prefix), Path.home(), Path(tempfile.gettempdir()), *extra]
    return sorted({str(path.resolve()) for path in paths} | {str(path) for path in paths}, key=len, reverse=True)


def leaks(nb, private: Iterable[str]) -> list[str]:
    """``"cell N: PATH"`` for each output of ``nb`` that shows one of the ``private`` paths (a
    path counts when what follows it is a separator or the end of a word)."""
    import re

    patterns = [(path, re.compile(re.escape(path) + r"(?=[/\\\"'\s:;,)]|$)")) for path in private]
    found = []
    for number, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        text = json.dumps([dict(o) for o in cell.outputs], ensure_ascii=False).replace("\\/", "/")
        found += [f"cell {number}: {path}" for path, pattern in patterns if pattern.search(text)]
    return found


@dataclass(frozen=True)
class NotebookWritten:
    """One notebook executed and written with its outputs."""

    path: Path
    """The notebook file."""
    outputs: int
    """Outputs kept, over every code cell."""
    figures: int
    """Plotly figures, each given a PNG."""
    bytes: int
    """The file's size."""
    seconds: float
    """The time it took to execute."""

    def describe(self) -> str:
        return (f"{self.path.name}: {self.outputs} outputs ({self.figures} plotly figures, each with a PNG), "
                f"{self.bytes / 1e6:.2f} MB, executed in {self.seconds:.0f} s")


def regenerate(names: Iterable[str] | None = None, folder: Path = NOTEBOOKS_DIR,
               bench_data: Path = BENCH_SLICES) -> Iterator[NotebookWritten]:
    """Execute each notebook of ``folder`` (``names``, default all) in order and write it in
    place with its outputs; yields each as it is written. The notebooks share fresh workspaces,
    so the first one ingests the sample corpus as a new user would.

    Raises
    ------
    NotebookFailed
        A notebook no longer runs (the notebooks before it are written, it is not).
    NotebookUnfit
        Its outputs show a path of this machine, or it is over :data:`MAX_BYTES`.
    """
    import nbformat
    from nbclient.exceptions import CellExecutionError

    with tempfile.TemporaryDirectory(prefix="workbench-notebooks-") as workspaces:
        private = private_paths(Path(workspaces))
        with notebook_environment(Path(workspaces), bench_data):
            for name in (list(names) if names is not None else notebook_names(folder)):
                path = folder / f"{name}.ipynb"
                committed = nbformat.read(path, as_version=4)
                nb = nbformat.read(path, as_version=4)
                started = time.perf_counter()
                try:
                    _execute_in_place(nb, folder)
                except CellExecutionError as exc:
                    raise _failure(path, nb, exc) from exc
                seconds = time.perf_counter() - started
                figures = add_static_figures(nb)
                settle(nb, metadata=committed.metadata)
                found = leaks(nb, private)
                if found:
                    raise NotebookUnfit(f"{path}: outputs show paths of this machine ({'; '.join(found)}): "
                                        "print names relative to the workspace or the checkout instead")
                text = nbformat.writes(nb)
                text += "" if text.endswith("\n") else "\n"  # as nbformat.write ends a file
                size = len(text.encode("utf-8"))
                if size > MAX_BYTES:
                    raise NotebookUnfit(f"{path}: {size / 1e6:.1f} MB with its outputs, over {MAX_BYTES / 1e6:.0f} MB: "
                                        "show less (a smaller graph, fewer rows)")
                path.write_text(text, encoding="utf-8")
                outputs = sum(len(cell.outputs) for cell in nb.cells if cell.cell_type == "code")
                yield NotebookWritten(path, outputs, figures, size, seconds)
