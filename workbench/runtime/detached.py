"""A forked child that works on behind its command: the saver a write leaves its files to, the
process that holds an embedded Chroma store for ``ingest``."""

from __future__ import annotations

import os

__all__ = ["detach_from_terminal"]


def detach_from_terminal() -> None:
    """A forked child's: a session of its own (a Ctrl-C meant for the shell's next command is not
    its), and standard streams on the null device (a caller reading the parent's output through a
    pipe gets its end once the parent exits, not once the child does)."""
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for stream in (0, 1, 2):
        os.dup2(null, stream)
    os.close(null)
