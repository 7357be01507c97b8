"""An embedded Chroma client held by a helper process, so a short command does not wait for chromadb.

Importing chromadb takes 0.4 to 0.7 s (its pydantic models, telemetry and embedding-function
modules), opening a store 0.07 s and a collection's first operation 0.17 s at 20,000 chunks:
most of what a fresh ``ingest`` of one note costs beyond its own work. :class:`ChromaSubprocess`
forks a helper that imports chromadb, opens the store and loads the collection while the command
reads its files, loads the model and embeds; the command's
:class:`~workbench.vectors.index.VectorIndex` then calls that client through a pipe, so this
runs on another core and the command never imports chromadb. Every call waits for its answer,
so a write step's order (vectors sent before the record's commit) is the same as with a client
in the process.

The helper answers with plain values: a collection is a handle (:class:`RemoteObject` on this
side), an error comes back as its type's name and message
(:class:`ChromaError`; a missing collection keeps Chroma's words, "does not exist"). It exits
when told (:meth:`ChromaSubprocess.stop`, after closing the store) or when this side's pipe
closes (the command ended or was killed); it ignores Ctrl-C, which the command handles. A
process forked from the command later (the saver it leaves its files to) closes its copy of the
pipe and never calls it.

>>> ChromaSubprocess.usable_for("server")
False
"""

from __future__ import annotations

import builtins
import os
import signal
import sys
import threading
import time
import weakref
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from ..runtime.detached import detach_from_terminal

__all__ = ["ChromaError", "ChromaSubprocess", "RemoteObject"]

#: The attributes of a Chroma collection read as values; any other name is a method.
ATTRIBUTES = frozenset({"name", "metadata", "id"})
#: The kinds of error said when the store does not open, and when the helper is gone.
_OPEN_FAILED, _ENDED = "OpenFailed", "HelperEnded"
#: Seconds :meth:`ChromaSubprocess.stop` waits for the helper to close its store and exit.
STOP_WAIT_S = 30.0


class ChromaError(RuntimeError):
    """An error Chroma raised in the helper: ``kind`` is its type's name (``NotFoundError``...)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class _Handle(int):
    """An object the helper holds (the client is 0, each collection another number)."""


class RemoteObject:
    """The client or a collection in the helper: a method call is sent and its answer returned;
    :data:`ATTRIBUTES` are read."""

    def __init__(self, owner: ChromaSubprocess, handle: int) -> None:
        self._owner, self._handle = owner, handle

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in ATTRIBUTES:
            return self._owner.call("attr", self._handle, name)
        return lambda *args, **kwargs: self._owner.call("call", self._handle, name, args, kwargs)


class ChromaSubprocess:
    """A helper process holding an embedded Chroma store at ``path`` (see the module docstring).
    :attr:`client` is the client a :class:`~workbench.vectors.index.VectorIndex` is handed. The
    helper opens the store as it starts when its folder is there, else at the first call (opening
    creates it), so a command that touches no vector creates nothing."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()  # one call at a time on the pipe
        self._pid = os.getpid()
        requests_read, requests_write = os.pipe()
        answers_read, answers_write = os.pipe()
        child = os.fork()
        if child == 0:  # the helper: a copy of this process, chromadb not imported yet
            code = 1
            try:
                os.close(requests_write)
                os.close(answers_read)
                _quiet_helper()
                serve(Connection(requests_read, writable=False), Connection(answers_write, readable=False), self.path)
                code = 0
            finally:
                os._exit(code)  # nothing of the command's (atexit, buffered output) runs here; nor chromadb's teardown
        os.close(requests_read)
        os.close(answers_write)
        self._child = child
        self._send = Connection(requests_write, readable=False)
        self._receive = Connection(answers_read, writable=False)
        self.client = RemoteObject(self, 0)
        _LIVE.add(self)

    @staticmethod
    def usable_for(backend: str) -> bool:
        """Whether a helper can hold this ``vector_store.backend`` for this process: the embedded
        one (a server's client is opened where it is used), forked from a process of one thread
        that has not imported chromadb (there is nothing to hide then, and a fork would inherit
        its runtime without its threads), on a system where a fork without exec is safe (not macOS)."""
        return (backend == "embedded" and "chromadb" not in sys.modules and hasattr(os, "fork")
                and sys.platform != "darwin" and threading.active_count() == 1)

    def call(self, op: str, handle: int = 0, name: str = "", args: tuple = (), kwargs: dict | None = None) -> Any:
        """Send one request (``op`` "call" a method or "attr" read one) and return its answer,
        raising what the helper raised; :class:`~workbench.vectors.index.VectorStoreUnavailable`
        when the store does not open or the helper is gone."""
        if os.getpid() != self._pid:
            raise RuntimeError("the Chroma helper belongs to the process that started it")
        with self._lock:
            status, value = "error", (_ENDED, f"the process holding the Chroma store at {self.path} was stopped")
            if not self._send.closed:
                try:
                    self._send.send((op, handle, name, args, kwargs or {}))
                    status, value = self._receive.recv()
                except (EOFError, OSError) as exc:
                    value = (_ENDED, f"the process holding the Chroma store at {self.path} ended ({exc or 'no answer'})")
        if status == "error":
            kind, message = value
            if kind in (_OPEN_FAILED, _ENDED):
                from .index import VectorStoreUnavailable

                raise VectorStoreUnavailable(message)
            builtin = getattr(builtins, kind, None)  # ValueError, KeyError...: raised as themselves
            if isinstance(builtin, type) and issubclass(builtin, Exception) and builtin is not Exception:
                raise builtin(message)
            raise ChromaError(kind, message)
        return _local(value, self)

    def warm(self, collection: str) -> None:
        """Have the helper load ``collection`` while this process works on (no answer is waited
        for), if the store and the collection are there."""
        with self._lock:
            if not self._send.closed:
                self._send.send(("warm", 0, collection, (), {}))

    def stop(self) -> None:
        """Close the store and end the helper, waiting for it (:data:`STOP_WAIT_S`, then killed)."""
        with self._lock:
            if self._send.closed:
                return
            try:
                self._send.send(("quit", 0, "", (), {}))
            except OSError:
                pass
            self._close_pipes()
        deadline = time.monotonic() + STOP_WAIT_S
        while os.waitpid(self._child, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(self._child, signal.SIGKILL)
                os.waitpid(self._child, 0)
                break
            time.sleep(0.005)
        _LIVE.discard(self)

    def _close_pipes(self) -> None:
        for end in (self._send, self._receive):
            if not end.closed:
                end.close()


def _local(value: Any, owner: ChromaSubprocess) -> Any:
    """An answer with each handle made a :class:`RemoteObject`."""
    if isinstance(value, _Handle):
        return RemoteObject(owner, int(value))
    if isinstance(value, list):
        return [_local(item, owner) for item in value]
    return value


#: Helpers of this process, whose pipes a forked child closes (so the helper sees this side end).
_LIVE: weakref.WeakSet[ChromaSubprocess] = weakref.WeakSet()


def _forget_in_child() -> None:
    for helper in list(_LIVE):
        helper._close_pipes()
    _LIVE.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


# -- the helper's side ------------------------------------------------------------------------


def _quiet_helper() -> None:
    """Ctrl-C is the command's to handle (it stops the helper), even one sent to the helper
    itself; nothing the helper prints reaches the command's output (its ``--json``), and a caller
    reading that output through a pipe is not kept waiting by the helper of a killed command."""
    detach_from_terminal()
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class _StoreUnopened(Exception):
    """The helper could not open the store (a damaged or unreadable folder)."""


class _Held:
    """The objects the helper answered with, by handle (the client is 0; a number is never reused)."""

    def __init__(self, collection_type: type) -> None:
        self.objects: dict[int, Any] = {}
        self._collection_type = collection_type
        self._next = 1

    def plain(self, value: Any) -> Any:
        """``value`` as the requesting side reads it without chromadb: a collection, or a list of
        them (``list_collections``), as handles; Chroma answers with plain values else (dicts of
        lists, numbers, arrays)."""
        if isinstance(value, list):
            return [self.plain(item) for item in value]
        if not isinstance(value, self._collection_type):
            return value
        for handle, held in self.objects.items():
            if held is value:
                return _Handle(handle)
        self.objects[self._next] = value
        self._next += 1
        return _Handle(self._next - 1)


def serve(requests: Connection, answers: Connection, path: Path) -> None:
    """Answer requests until told to quit or the requesting side closes its pipe."""
    import chromadb
    from chromadb.api.models.Collection import Collection
    from chromadb.config import Settings

    def opened():
        return chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))

    held = _Held(Collection)
    if path.is_dir():  # opening an existing store creates nothing: done before the first request
        try:
            held.objects[0] = opened()
        except Exception:  # said, with its reason, at the first call
            pass
    while True:
        try:
            op, handle, name, args, kwargs = requests.recv()
        except (EOFError, OSError):
            break
        if op == "quit":
            break
        if op == "warm":  # asked without waiting for an answer: none is sent
            _load(held.objects.get(0), name)
            continue
        try:
            if handle == 0 and 0 not in held.objects:
                try:
                    held.objects[0] = opened()
                except Exception as exc:
                    raise _StoreUnopened(f"cannot open the Chroma store at {path}: {exc}") from exc
            found = getattr(held.objects[handle], name)
            answer = ("ok", held.plain(found if op == "attr" else found(*args, **kwargs)))
        except _StoreUnopened as exc:
            answer = ("error", (_OPEN_FAILED, str(exc)))
        except Exception as exc:
            answer = ("error", (type(exc).__name__, str(exc)))
        try:
            answers.send(answer)
        except OSError:  # the requesting side is gone
            break
    client = held.objects.get(0)
    if client is not None:
        client.close()


def _load(client, name: str) -> None:
    """Load the collection ``name`` now if the store holds it (Chroma's first operation on a
    collection loads it: 0.17 s at 20,000 chunks), so the command's first write does not wait."""
    if client is None:
        return
    try:
        client.get_collection(name, embedding_function=None).count()
    except Exception:  # not there (a first ingest): its first write creates it
        pass
