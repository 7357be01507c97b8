"""Paths typed into the app: read only under the roots named in ``app.allowed_roots``.

A typed path is resolved (``~``, ``..`` and symbolic links followed) and accepted only when it
lies under one of the roots, themselves resolved against the folder the app was started in.
The refusal names the path and the setting, never anything read from the file.

Examples
--------
>>> from pathlib import Path
>>> import tempfile
>>> root = Path(tempfile.mkdtemp()).resolve()
>>> allowed_path(root / "notes", [str(root)]) == root / "notes"
True
>>> allowed_path("/etc/passwd", [str(root)])
Traceback (most recent call last):
...
workbench.ingest.allowed_paths.PathRefused: /etc/passwd is outside the folders the app may read (...: app.allowed_roots); type a path under one of them, upload the files instead, or add its folder to app.allowed_roots
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

__all__ = ["PathRefused", "allowed_path", "resolved_roots"]


class PathRefused(ValueError):
    """A typed path outside every allowed root (or one that names a hidden file or folder)."""


def resolved_roots(roots: Sequence[str], base: str | Path | None = None) -> list[Path]:
    """The roots as absolute, resolved folders; a relative one is read from ``base`` (default: the
    current folder, the one the app was started in)."""
    start = Path(base) if base is not None else Path.cwd()
    return [(start / Path(root).expanduser()).resolve() for root in roots if str(root).strip()]


def allowed_path(path: str | Path, roots: Sequence[str], base: str | Path | None = None) -> Path:
    """``path`` resolved, if it lies under one of ``roots``; :class:`PathRefused` otherwise.

    A hidden part below the root (``.env``, ``.ssh/``) is refused too: a folder of documents
    does not hold its secrets in dot files.
    """
    text = str(path).strip()
    if not text:
        raise PathRefused("no path given: type a folder or file path")
    start = Path(base) if base is not None else Path.cwd()
    target = (start / Path(os.path.expanduser(text))).resolve()
    for root in resolved_roots(roots, base):
        if target == root or root in target.parents:
            if any(part.startswith(".") for part in target.relative_to(root).parts):
                break
            return target
    folders = ", ".join(str(root) for root in resolved_roots(roots, base)) or "none"
    raise PathRefused(f"{text} is outside the folders the app may read ({folders}: app.allowed_roots); type a path "
                      "under one of them, upload the files instead, or add its folder to app.allowed_roots")
