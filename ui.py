"""The UI helper module: cached resources, the shared workspace, page state and the write steps
the pages share (tables and the chunk viewer are in :mod:`ui_widgets`).

The workspace (``WORKBENCH_WORKSPACE``, default ``./workspace``) and the embedding model are
opened once per process with ``st.cache_resource`` and shared by every session; what a person
does (results, uploads, last ingest report) lives in their own ``st.session_state``. Derived
views are cached with ``st.cache_data`` keyed by the workspace version, so any change to the
workspace shows at once.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from workbench.ingest.failures import StepFailed
from workbench.ingest.loaders import LoadError
from workbench.record.store import RECORD_FILE, database_error_message
from workbench.text.safe_text import printable
from workbench.settings import Settings, SettingsError, load_settings
from workbench.views import graph as graph_views
from workbench.views.wording import redone_for_settings, stage_text
from workbench.views.graph import GraphFacts, GraphFilters, community_view, graph_facts, max_edge_weight, select_view
from workbench.views.graph_html import graph_html, legend_html, type_legend
from workbench.workspace import Workspace, WorkspaceBusy
from workbench.workspace.watch import FolderWatch

__all__ = [
    "ROOT", "SAMPLE_CORPUS", "SAMPLE_TASKS", "KEEP", "workspace_path", "workspace", "kept", "keep_widget_state",
    "UrlField", "view_from_url", "view_to_url", "DrawnGraph", "graph_view", "suggestions", "md_text", "upload_and_ingest", "ingest", "show_last_ingest",
    "workspace_metrics", "require_documents", "typed_path", "ENTITY", "clear_choice", "remove_documents", "canonical_first", "run_write", "graph_facts_of", "top_weight_of",
    "folder_watch", "start_folder_watch", "stop_folder_watch",
]

ROOT = Path(__file__).resolve().parent
SAMPLE_CORPUS = ROOT / "sample_corpus"
SAMPLE_TASKS = SAMPLE_CORPUS / "tasks.yaml"
#: Widget keys starting with this survive navigation between pages (see :func:`keep_widget_state`).
KEEP = "keep."
#: The entity a person looks at, shared by the Graph and Timeline pages (kept across pages).
ENTITY = KEEP + "entity"


# -- resources, once per process ----------------------------------------------------------

def workspace_path() -> Path:
    return Path(os.environ.get("WORKBENCH_WORKSPACE") or "workspace").resolve()


@st.cache_resource(show_spinner="Reading the settings...")
def _settings(path: str | None) -> Settings:
    return load_settings(path)


@st.cache_resource(show_spinner="Loading the embedding model (once per process)...")
def _embedder(embedding: str):
    from workbench.embedding import EmbeddingUnavailable, embedder_from_settings
    from workbench.settings import EmbeddingSettings, Settings

    # The embedding section as JSON is the cache key; the embedder it names is made once.
    embedder = embedder_from_settings(Settings(embedding=EmbeddingSettings.model_validate_json(embedding)))
    try:
        embedder.embed(["warm up"])  # load it now, behind the spinner, not in the first query
    except EmbeddingUnavailable:
        pass  # retrieval reports keyword_only with the reason
    return embedder


@st.cache_resource(show_spinner="Opening the workspace...")
def _open_workspace(path: str, settings_path: str | None) -> Workspace:
    from workbench.corpus.summaries import rebuild_in_background

    settings = _settings(settings_path)
    ws = Workspace(path, settings=settings, embedder=_embedder(settings.embedding.model_dump_json()))
    rebuild_in_background(ws)  # the pages show the last themes, and their version, while new ones are built
    return ws


@st.cache_resource(show_spinner=False)
def _warming(path: str, settings_path: str | None) -> threading.Thread:
    """The thread building the graph and the retrieval indexes of the workspace
    :func:`_open_workspace` serves for these arguments, started at the first call."""
    from workbench.retrieve.cache import warm

    thread = threading.Thread(target=warm, args=(_open_workspace(path, settings_path),), name="warm-workspace",
                              daemon=True)
    thread.start()
    return thread


def warm_after_page() -> None:
    """Build the graph and the retrieval indexes in the background while the person looks at the
    page just drawn (``app.py`` calls it once the page has run). Started with the page, the
    warm-up would hold the interpreter while the page runs and delay its first draw on a large
    workspace (docs/scaling.md gives the first page's time at scale)."""
    try:
        _warming(str(workspace_path()), os.environ.get("WORKBENCH_SETTINGS") or None)
    except SettingsError:
        pass  # the page said so already


def workspace() -> Workspace:
    """The workspace this process serves; a bad settings file stops the page with its message."""
    try:
        return _open_workspace(str(workspace_path()), os.environ.get("WORKBENCH_SETTINGS") or None)
    except SettingsError as exc:
        st.error(f"The settings could not be loaded: {exc}")
        st.stop()


# -- page state -----------------------------------------------------------------------------

def kept(page: str, name: str, default=None) -> str:
    """A widget key for ``page`` that keeps its value across navigation; sets ``default`` once.

    Pass the returned key to the widget and no ``value``/``default``/``index`` argument.
    """
    key = f"{KEEP}{page}.{name}"
    if key not in st.session_state and default is not None:
        st.session_state[key] = default
    return key


def keep_widget_state() -> None:
    """Re-assign every kept widget value, so Streamlit does not drop it when its page is left.

    Call it at the top of every page: the page, not always the entrypoint, runs on each rerun."""
    for key in [k for k in st.session_state.keys() if str(k).startswith(KEEP)]:
        st.session_state[key] = st.session_state[key]


# -- a view is a link: widget values kept in the page's URL ------------------------------------

@dataclass(frozen=True)
class UrlField:
    """One widget value a page keeps in its URL (``st.query_params``)."""

    name: str
    """The query parameter, short and readable: ``q``, ``modes``, ``as_of``."""
    key: str
    """The widget's session-state key."""
    kind: str = "text"
    """``text``, ``int``, ``date`` or ``list`` (a parameter repeated once per item)."""
    choices: Collection[str] = ()
    """The values the widget accepts (empty: any); others in a URL are ignored."""
    bounds: tuple[int, int] | None = None
    """For ``int``: the smallest and largest value the widget accepts."""

    def decode(self, raw: list[str]):
        """The widget value a URL's parameter stands for; ``ValueError`` when it stands for none."""
        import datetime as dt

        if self.kind == "list":
            return [item for item in raw if not self.choices or item in self.choices]
        text = raw[-1]
        if self.kind == "int":
            number = int(text)
            if self.bounds and not self.bounds[0] <= number <= self.bounds[1]:
                raise ValueError(f"{self.name}={text} is out of range")
            return number
        if self.kind == "date":
            return dt.date.fromisoformat(text)
        if self.choices and text not in self.choices:
            raise ValueError(f"{self.name}={text} is not a choice")
        return text

    def encode(self, value) -> str | list[str]:
        if self.kind == "list":
            return [str(item) for item in value]
        return value.isoformat() if self.kind == "date" else str(value)


def view_from_url(page: str, fields: Iterable[UrlField]) -> None:
    """Once a session, before the page's widgets: the values its URL holds become theirs, so a
    reload or a pasted link shows the same view. A value that is not a choice is ignored."""
    flag = f"url.read.{page}"
    if st.session_state.get(flag):
        return
    st.session_state[flag] = True
    for field in fields:
        raw = st.query_params.get_all(field.name)
        if not raw:
            continue
        try:
            st.session_state[field.key] = field.decode(raw)
        except ValueError:
            continue


def view_to_url(fields: Iterable[UrlField]) -> None:
    """After the page's widgets: write their values into the URL (empty ones left out)."""
    params: dict[str, str | list[str]] = {}
    for field in fields:
        value = st.session_state.get(field.key)
        if value is None or value == "" or (field.kind == "list" and not value):
            continue
        params[field.name] = field.encode(value)
    if st.query_params.to_dict() != {k: v[-1] if isinstance(v, list) else v for k, v in params.items()} or any(
            isinstance(v, list) and st.query_params.get_all(k) != v for k, v in params.items()):
        st.query_params.from_dict(params)


# -- derived views, cached by workspace version -------------------------------------------------

@dataclass(frozen=True)
class DrawnGraph:
    """A drawn view of the graph, as the Graph page shows it."""

    html: str
    note: str
    legend: str
    nodes: int
    """Entities on screen when the drawing opens (those a click unfolds not counted)."""
    edges: int
    chunks: int
    keys: tuple[str, ...]
    focus_edges: tuple = ()
    """The drawn edges at the entity found: the page's neighbour table lists exactly these."""
    focus_total: int = 0
    """The edges at the entity found in this view, before the filters."""
    folded: int = 0
    """Entities one step further, drawn hidden until a neighbour is clicked."""


@st.cache_data(show_spinner="Drawing the graph...", max_entries=32)
def _graph_view(path: str, settings_path: str | None, version: int, view: str, filters: GraphFilters,
                height: int) -> DrawnGraph:
    ws = _open_workspace(path, settings_path)
    documents = {chunk_id: document for chunk_id, (document, _) in ws.store.chunk_context().items()} \
        if filters.show_chunks else None
    records = ws.documents()
    title_of = {d.id: d.title for d in records}
    # A glossary entry's title is its term (a thing); a note's or a chat log's is a label.
    labels = {d.title for d in records if d.title and d.kind != "record"}
    titles = None
    if documents is not None:
        titles = {chunk_id: title_of.get(document, "") for chunk_id, document in documents.items()}
    selected = select_view(ws.graph, view, filters, ws.graph.passages.entities_of, documents, titles,
                           document_titles=labels)
    return DrawnGraph(graph_html(selected, height), selected.note,
                      legend_html(type_legend(selected), len(selected.chunks)), selected.visible,
                      len(selected.edges), len(selected.chunks),
                      tuple(entity.key for entity in selected.nodes if entity.key not in selected.folded),
                      tuple(selected.focus_edges), selected.focus_total, len(selected.folded))


# A resource, not data: the facts of a large graph are returned as they are, not unpickled per rerun.
@st.cache_resource(show_spinner="Reading the graph...", max_entries=4)
def _graph_facts(path: str, settings_path: str | None, version: int) -> GraphFacts:
    return graph_facts(_open_workspace(path, settings_path).graph)


def graph_facts_of(ws: Workspace) -> GraphFacts:
    """Names, types, relations and dates of the graph (cached by workspace version)."""
    return _graph_facts(str(ws.path.resolve()), os.environ.get("WORKBENCH_SETTINGS") or None, ws.version)


@st.cache_data(max_entries=8)
def _top_weight(path: str, settings_path: str | None, version: int, view: str) -> int:
    return max_edge_weight(_open_workspace(path, settings_path).graph, view)


def entity_choices_of(facts: GraphFacts, find_key: str) -> tuple[str, ...]:
    """The keys an entity box lists: every entity of a small graph; past
    ``MAX_LISTED_NAMES`` (every option is sent to the browser at each rerun) those matching the
    text typed into a search box drawn here, the entity shown (``ENTITY``) kept listed while
    another is looked for."""
    choices = facts.keys_by_name
    if len(choices) > graph_views.MAX_LISTED_NAMES:
        typed = st.text_input(f"Search the {len(choices):,} entities: type part of a name", key=find_key)
        choices = graph_views.entity_choices(facts, typed)
        picked = st.session_state.get(ENTITY)
        if picked in facts.names and picked not in choices:
            choices = (picked, *choices)
    return choices


def top_weight_of(ws: Workspace, view: str) -> int:
    """The largest edge weight of a view of the graph (cached by workspace version)."""
    return _top_weight(str(ws.path.resolve()), os.environ.get("WORKBENCH_SETTINGS") or None, ws.version, view)


@st.cache_data(show_spinner="Drawing the community...", max_entries=32)
def _community_html(path: str, settings_path: str | None, version: int, members: tuple[str, ...], height: int) -> str:
    ws = _open_workspace(path, settings_path)
    return graph_html(community_view(ws.graph, members), height)


def community_html(ws: Workspace, members: tuple[str, ...], height: int = 520) -> str:
    """One community drawn with pyvis (cached by workspace version and members)."""
    return _community_html(str(ws.path.resolve()), os.environ.get("WORKBENCH_SETTINGS") or None, ws.version,
                           tuple(members), height)


def graph_view(ws: Workspace, view: str, filters: GraphFilters, height: int = 640) -> DrawnGraph:
    """A view of the graph drawn for the Graph page (cached by workspace version and filters)."""
    return _graph_view(str(ws.path.resolve()), os.environ.get("WORKBENCH_SETTINGS") or None, ws.version, view,
                       filters, height)


@st.cache_data(show_spinner="Looking for near-duplicate names...", max_entries=8)
def _suggestions(path: str, settings_path: str | None, version: int):
    return _open_workspace(path, settings_path).corrections.suggestions()


def suggestions(ws: Workspace):
    """Suggested merges for the workspace as it is now."""
    return _suggestions(str(ws.path.resolve()), os.environ.get("WORKBENCH_SETTINGS") or None, ws.version)


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def md_text(text: object) -> str:
    r"""``text`` for ``st.markdown`` shown as written: control characters as escapes
    (:func:`~workbench.text.safe_text.printable`), Markdown marks and HTML brackets escaped.

    Examples
    --------
    >>> print(md_text("<img src=x> *a*"))
    \<img src=x\> \*a\*
    >>> print(md_text("a\x1b[2J"))
    a\\x1b\[2J
    """
    return _MARKDOWN_SPECIAL.sub(r"\\\1", printable(text))


def canonical_first(ws: Workspace, a: str, b: str) -> tuple[str, str]:
    """``(canonical, alias)``: the more mentioned name is kept as the canonical one."""
    mentions = {e.name: e.mentions for e in ws.entities()}
    return (a, b) if mentions.get(a, 0) >= mentions.get(b, 0) else (b, a)


# -- writing ----------------------------------------------------------------------------------

def upload_and_ingest(ws: Workspace, files: Iterable) -> None:
    """Save uploaded files under ``<workspace>/uploads`` with their folders
    (:func:`workbench.ingest.uploads.save_uploads`) and ingest them; files holding the bytes of a
    stored file are not added again, and the report says which."""
    from workbench.ingest.uploads import save_uploads

    started = time.perf_counter()
    first_id: dict[str, str] = {}
    for document, source in sorted(ws.store.document_sources().items()):
        first_id.setdefault(source, document)
    stored = {row[3]: first_id[source] for source, row in ws.store.file_hashes().items() if source in first_id}
    try:
        saved = save_uploads(ws.path / "uploads", [(upload.name, upload.getvalue()) for upload in files], stored)
    except (OSError, ValueError) as exc:
        st.session_state["corpus.last_report"] = {"error": f"the uploads could not be saved: {exc}"}
        return
    if saved.paths:
        ingest(ws, saved.paths, started)
    else:
        st.session_state["corpus.last_report"] = {"nothing_new": True}
    report = st.session_state.get("corpus.last_report")
    if report is not None and "error" not in report:
        report["identical"] = saved.identical


def typed_path(ws: Workspace, text: str, report: str | None = None) -> Path | None:
    """The path a person typed, if it lies under ``app.allowed_roots``; otherwise one error line
    (naming the path, the folders allowed and the setting, nothing from the file) and ``None``.
    With ``report`` (a session key a page shows its outcome from, as ``corpus.last_report``), the
    error replaces that outcome instead, so the page shows one message in one place."""
    from workbench.ingest.allowed_paths import PathRefused, allowed_path

    try:
        return allowed_path(text, ws.settings.app.allowed_roots)
    except PathRefused as exc:
        if report is None:
            st.error(md_text(exc))
        else:
            st.session_state[report] = {"error": str(exc)}
            st.rerun()
        return None


def run_write(ws: Workspace, action, *args) -> bool:
    """Run a workspace write; show a clear message instead of a traceback when it fails."""
    try:
        action(*args)
        return True
    except (WorkspaceBusy, StepFailed) as exc:
        st.error(md_text(exc))
    except sqlite3.OperationalError as exc:  # a full disk: named, with nothing to discard
        st.error(md_text(database_error_message(ws.path / RECORD_FILE, exc)[0]))
    except (ValueError, KeyError) as exc:
        st.error(md_text(exc.args[0] if isinstance(exc, KeyError) and exc.args else exc))
    return False


def clear_choice(key: str, empty=None) -> None:
    """A widget callback: the box ``key`` shows nothing chosen (in the browser too); ``empty``
    is a multiselect's nothing, ``[]``."""
    st.session_state[key] = empty


def remove_documents(ws: Workspace, documents: tuple[str, ...]) -> None:
    """A widget callback: remove ``documents`` in one write, clear the box that chose them, say
    what happened."""
    if run_write(ws, ws.remove, list(documents)):
        st.session_state["corpus.last_report"] = None
        st.toast(f"Removed {md_text(documents[0])}" if len(documents) == 1 else f"Removed {len(documents)} documents")
    st.session_state["corpus.doomed"] = []


def ingest(ws: Workspace, paths: list[Path], started: float | None = None) -> None:
    """Ingest ``paths`` with a progress bar; the report is kept in this session for display,
    with the seconds the person waited since ``started`` (default: now), not only the ingest's own."""
    started = time.perf_counter() if started is None else started
    bar = st.progress(0.0, text="Starting...")

    stage_began: dict[str, float] = {}

    def progress(stage: str, done: int, total: int) -> None:
        seconds = time.perf_counter() - stage_began.setdefault(stage, time.perf_counter())
        bar.progress(min(done / total, 1.0) if total else 0.0, text=stage_text(stage, done, total, seconds))

    try:
        report = ws.ingest(paths, progress=progress)
    except (WorkspaceBusy, StepFailed, LoadError) as exc:  # LoadError: ids another file holds, say
        st.session_state["corpus.last_report"] = {"error": str(exc)}
        return
    except sqlite3.OperationalError as exc:
        st.session_state["corpus.last_report"] = {"error": database_error_message(ws.path / RECORD_FILE, exc)[0]}
        return
    bar.progress(1.0, text="Done")
    st.session_state["corpus.last_report"] = {**report.to_json(), "waited": time.perf_counter() - started}


def show_last_ingest() -> None:
    """The outcome of this session's last ingest: a summary line, one warning per problem."""
    report = st.session_state.get("corpus.last_report")
    if not report:
        return
    if "error" in report:
        st.error(md_text(report["error"]))
        return
    identical = report.get("identical") or []
    if identical:
        shown = ", ".join(f"{name} (as {document})" for name, document in identical[:5])
        more = f" and {len(identical) - 5} more" if len(identical) > 5 else ""
        st.info(md_text(f"{len(identical)} uploaded file{'s' if len(identical) != 1 else ''} unchanged: the "
                        f"workspace already holds the same text, so nothing was added: {shown}{more}."))
    if report.get("nothing_new"):
        return
    st.success(f"Ingested in {report.get('waited', report['seconds']):.1f} s: {report['documents_added']} added, "
               f"{report['documents_updated']} updated, {report['documents_unchanged']} unchanged, "
               f"{report['documents_removed']} removed; {report['chunks_written']} chunks written.")
    if report.get("files_redone_for_settings"):
        st.info(redone_for_settings(report["files_redone_for_settings"]) + ".")
    problems, task_files = split_task_files(report["problems"] + report["extraction_problems"])
    for problem in problems:
        st.warning(md_text(problem))
    if task_files:
        st.caption("Not ingested, as expected: " + md_text(", ".join(task_files))
                   + " (task sets are run on the Evaluate page).")


@st.cache_resource
def _folder_watches() -> dict[str, FolderWatch]:
    """The folder watches of this process, one at most per workspace, shared by every session."""
    return {}


def folder_watch(ws: Workspace) -> FolderWatch | None:
    """The folder watch keeping ``ws`` in step (:class:`~workbench.workspace.watch.FolderWatch`), if one was started."""
    return _folder_watches().get(str(ws.path.resolve()))


def start_folder_watch(ws: Workspace, path: Path) -> FolderWatch:
    """Keep ``ws`` in step with ``path`` from a thread of this process until stopped (one watch a workspace)."""
    stop_folder_watch(ws)
    watching = _folder_watches()[str(ws.path.resolve())] = FolderWatch(ws, [path]).start()
    return watching


def stop_folder_watch(ws: Workspace) -> None:
    """A widget callback: stop the workspace's folder watch after the batch under way."""
    watching = _folder_watches().pop(str(ws.path.resolve()), None)
    if watching is not None:
        watching.stop()


_SKIPPED_YAML = re.compile(r"^(?P<file>.+\.ya?ml): skipped: unsupported extension \.ya?ml$")


def split_task_files(problems: list[str]) -> tuple[list[str], list[str]]:
    """``(problems, task files)``: a folder's own YAML task set is not a document, so skipping it
    is no problem to warn about.

    Examples
    --------
    >>> split_task_files(["sample_corpus/tasks.yaml: skipped: unsupported extension .yaml", "a.pdf: skipped"])
    (['a.pdf: skipped'], ['sample_corpus/tasks.yaml'])
    """
    kept, tasks = [], []
    for problem in problems:
        found = _SKIPPED_YAML.match(problem)
        (tasks.append(found.group("file")) if found else kept.append(problem))
    return kept, tasks


# -- shared widgets -------------------------------------------------------------------------------

#: Seconds a page waits for the graph the warm-up thread is building before it shows the
#: record's counts alone: long enough for a small workspace's graph, too short to hold a page
#: up for a large one's.
GRAPH_WAIT_S = 5.0


@st.fragment(run_every=2.0)
def _rerun_when_built(ws: Workspace) -> None:
    if ws.background.graph_if_ready() is not None:
        st.rerun()


def workspace_metrics(ws: Workspace) -> dict:
    """Documents, chunks, entities and edges as metrics in one row; returns the stats. They come
    from the graph snapshot's manifest when it is current (so the page waits for no graph, which
    on a large workspace would be most of its time); else, while the graph is still being built,
    the record's counts are shown, and the page reruns when it is done."""
    counts = ws.derivation.counts_from_snapshot()  # no graph loaded when the snapshot is current
    stats = None if counts is None else {**ws.record_stats(), **counts}
    built = stats is not None or ws.background.graph_if_ready(wait=GRAPH_WAIT_S) is not None
    if stats is None:
        stats = ws.stats() if built else ws.record_stats()
    for column, (label, key) in zip(st.columns(4), [("Documents", "documents"), ("Chunks", "chunks"),
                                                  ("Entities", "entities"), ("Edges", "edges")]):
        column.metric(label, stats.get(key, "…"))
    if built:
        st.caption(f"Workspace: {stats['workspace']} · {stats['comention_edges']} co-mention edges · "
                   f"{stats['merges']} merges")
    else:
        st.caption(f"Workspace: {stats['workspace']} · building the context graph from the record (about a minute "
                   "for 60,000 passages); its counts appear when it is done, and this page works meanwhile.")
        _rerun_when_built(ws)
    return stats


def require_documents(ws: Workspace) -> bool:
    """False (after saying what to do) when the workspace holds no documents yet."""
    if ws.store.count("documents"):
        return True
    st.info("The workspace is empty: ingest some documents first. The Corpus page can load the bundled "
            "sample corpus in one click.")
    st.page_link("pages/corpus.py", label="Open the Corpus page")
    return False
