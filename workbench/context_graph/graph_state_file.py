"""A writer's derivation state (:class:`~workbench.context_graph.graph_state.GraphState`) kept on
disk, so that a fresh process's first write follows the record from it instead of deriving the
whole graph again (a fresh ``ingest`` of one note among 20,000: the graph's 1.2 s of derivation
become the file's load, about 0.3 s).

``graph_state.pickle`` in the workspace folder, signed for this user
(:mod:`workbench.runtime.signed_pickle`: a file planted in a shared folder is never unpickled). Its
header names the record version the state was derived for and the key it is valid for: the
settings that shape the graph (as the snapshot's key, less the version) and a digest of the
source of the modules whose objects it holds, so a state pickled by other code is never followed.
A state older than the record is followed like a writer's own after another process's writes.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from ..runtime.gc_paused import gc_paused
from ..runtime.signed_pickle import SignedFileUnusable, dump_signed, load_signed, read_header
from .graph_state import GraphState

__all__ = ["FILE_NAME", "StateUnusable", "code_digest", "kept_version", "load_graph_state", "save_graph_state"]

FILE_NAME = "graph_state.pickle"
_LABEL = "graph derivation state"
#: The packages whose objects a state holds, or whose code decides what they mean.
_PACKAGES = ("context_graph", "model", "text")


class StateUnusable(Exception):
    """No state to follow: missing, made for other settings or code, or not signed by this user."""


@cache
def code_digest() -> str:
    """SHA-256 of the source of the packages a state's objects come from."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for package in _PACKAGES:
        for source in sorted((root / package).glob("*.py")):
            digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    return digest.hexdigest()


def _key(key: str) -> str:
    return hashlib.sha256(f"{key}:{code_digest()}".encode()).hexdigest()


def save_graph_state(folder: Path, key: str, version: int, state: GraphState) -> Path:
    """Pickle ``state``, derived for record ``version`` under settings ``key``, into ``folder``."""
    path = Path(folder) / FILE_NAME
    dump_signed(path, {"label": _LABEL, "key": _key(key), "version": version}, state)
    return path


def kept_version(folder: Path, key: str) -> int | None:
    """The record version of the state kept in ``folder`` for settings ``key``, as its header says
    (not checked against its signature: enough to tell whether a save would go back in time)."""
    try:
        header = read_header(Path(folder) / FILE_NAME, _LABEL)
    except SignedFileUnusable:
        return None
    version = header.get("version")
    return version if header.get("key") == _key(key) and isinstance(version, int) else None


def load_graph_state(folder: Path, key: str) -> tuple[int, GraphState]:
    """The state kept in ``folder`` for settings ``key``, and the record version it was derived for.

    Raises
    ------
    StateUnusable
        With the reason, when there is none to follow.
    """
    try:
        with gc_paused():  # millions of acyclic objects: the collector would walk them again and again
            header, state = load_signed(Path(folder) / FILE_NAME, _LABEL, expect={"key": _key(key)})
    except SignedFileUnusable as exc:
        raise StateUnusable(str(exc).replace("another key", "other graph settings or another version of the code")
                            ) from None
    if not isinstance(state, GraphState):
        raise StateUnusable(f"{FILE_NAME} holds no derivation state")
    return int(header["version"]), state
