"""The workspace's write lock: a file lock on the folder, so two processes never write at once.

A writer waits up to ``timeout`` seconds and then gets :class:`WorkspaceBusy`; a reader that
would save a derived file only takes the lock when it is free now (:meth:`WriteLock.try_take`),
and a read-only workspace never takes it.
"""

from __future__ import annotations

import os
import signal
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path

from filelock import FileLock, Timeout

try:
    import fcntl
except ImportError:  # not on Windows: a reader there does not wait for a writer's files
    fcntl = None  # type: ignore[assignment]

#: Seconds between two looks at whether a writer still holds the lock.
_PROBE_SECONDS = 0.05

__all__ = ["WorkspaceBusy", "WriteLock"]


class WorkspaceBusy(RuntimeError):
    """Another process is writing to the workspace."""


class _HeldByThisProcess:
    """The lock object of a forked child that holds the lock on a descriptor of its own
    (:meth:`WriteLock.held_after_parent`): taking it again and giving it back change nothing."""

    is_locked = True

    def acquire(self, timeout: float = -1):
        return nullcontext()

    def release(self) -> None:
        pass


class WriteLock:
    """``workspace.lock`` in ``path``. ``with lock.hold():`` holds it for one block."""

    def __init__(self, path: Path, timeout: float, read_only: bool = False) -> None:
        self.path = path
        self.timeout = timeout
        self.read_only = read_only
        self._lock = FileLock(str(path / "workspace.lock"))

    def hold(self):
        """The lock, held for one ``with`` block (acquired exactly once)."""
        try:
            return self._lock.acquire(timeout=self.timeout)
        except Timeout:
            raise WorkspaceBusy(
                f"workspace {self.path} is busy: another process is writing to it; try again when it finishes"
            ) from None

    def try_take(self) -> bool:
        """Take the lock if it is free now, or already this thread's (never waits); never for a
        read-only workspace, which so saves no derived file. Give it back with :meth:`release`."""
        if self.read_only:
            return False
        try:
            self._lock.acquire(timeout=0)
            return True
        except (Timeout, OSError):
            return False

    def release(self) -> None:
        self._lock.release()

    def wait_free(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a writer of another process or handle to give the lock
        back, never taking it (a read-only workspace waits too); True once no other holds it."""
        deadline = time.monotonic() + timeout
        while self._held_elsewhere():
            if time.monotonic() >= deadline:
                return False
            time.sleep(_PROBE_SECONDS)
        return True

    @contextmanager
    def held_after_parent(self, timeout: float):
        """In a forked child: the lock on a descriptor of its own, taken once the parent (whose
        lock the child shares until the parent gives it back) and any writer queued before it are
        done; yields whether it was had within ``timeout`` seconds. Within the block every take of
        this object is the child's hold, and nothing gives it back before the block ends (the
        parent's lock object refuses a child: filelock tells an inherited lock). It waits in the
        kernel, so the lock passes to the child as the parent gives it back."""
        def waited_too_long(signum, frame):
            raise TimeoutError

        fd = os.open(self.path / "workspace.lock", os.O_RDWR | os.O_CREAT, 0o644)
        before = signal.signal(signal.SIGALRM, waited_too_long)
        signal.alarm(max(1, int(timeout)))
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                had = True
            except TimeoutError:
                had = False
            finally:
                signal.alarm(0)
                signal.signal(signal.SIGALRM, before)
            if had:
                self._lock = _HeldByThisProcess()  # type: ignore[assignment]
            yield had
        finally:
            os.close(fd)  # gives the lock back

    def _held_elsewhere(self) -> bool:
        """Whether another handle holds the lock: a shared lock on the file is refused while a
        writer holds its exclusive one (a probe a read-only handle may make: the file is only read)."""
        if fcntl is None or self._lock.is_locked:
            return False
        try:
            fd = os.open(self.path / "workspace.lock", os.O_RDONLY)
        except OSError:  # no lock file: nobody ever wrote here
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        else:
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        finally:
            os.close(fd)

    @property
    def is_locked(self) -> bool:
        """Whether this process holds it."""
        return self._lock.is_locked
