"""Python objects kept on disk for the user who wrote them: pickled, and signed with a key only
that user can read, so that a file planted in a shared workspace folder is refused before a byte
of it is unpickled (unpickling runs code).

The key is ``signing.key`` in the workbench's cache folder (``$WORKBENCH_CACHE``, else
``~/.cache/workbench``), 32 random bytes made at first use, readable by its owner alone; a key
file others can read or write is not trusted, and nothing is signed or loaded then. A file holds a
magic line, a JSON header (its ``label`` and what the caller keeps in it), an HMAC-SHA256 of header
and payload, and the pickle. Writes are atomic (a temporary beside the file, renamed over it).

Examples
--------
>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> dump_signed(folder / "state.pickle", {"label": "example", "version": 3}, {"a": [1, 2]})
>>> load_signed(folder / "state.pickle", "example")
({'label': 'example', 'version': 3}, {'a': [1, 2]})
>>> load_signed(folder / "state.pickle", "another")
Traceback (most recent call last):
...
workbench.runtime.signed_pickle.SignedFileUnusable: state.pickle holds another kind of file
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import pickle
import secrets
import stat
import struct
from pathlib import Path

from .array_file import new_temporary, open_for_reading

__all__ = ["MAGIC", "SignedFileUnusable", "dump_signed", "load_signed", "read_header", "signing_key"]

MAGIC = b"workbench signed pickle 1\n"
_KEY_BYTES = 32
_MAC_BYTES = hashlib.sha256().digest_size


class SignedFileUnusable(Exception):
    """The file cannot be used (missing, another label, not signed by this user's key, damaged)."""


def _key_path() -> Path:
    root = os.environ.get("WORKBENCH_CACHE")
    return (Path(root) if root else Path.home() / ".cache" / "workbench") / "signing.key"


def signing_key() -> bytes | None:
    """This user's signing key, made at first use; None when it cannot be made or is not private
    (a file others may read or write, or one of another owner)."""
    path = _key_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(handle, "wb") as out:
                out.write(secrets.token_bytes(_KEY_BYTES))
        with open_for_reading(path) as raw:
            facts = os.fstat(raw.fileno())
            key = raw.read(_KEY_BYTES + 1)
    except (OSError, ValueError):
        return None
    private = facts.st_mode & (stat.S_IRWXG | stat.S_IRWXO) == 0 and facts.st_uid == os.getuid() \
        if hasattr(os, "getuid") else True
    return key if private and len(key) == _KEY_BYTES else None


def dump_signed(path: Path, header: dict, value: object) -> None:
    """Write ``value`` pickled to ``path`` with ``header`` (JSON-ready, with a ``label``),
    signed; raises ``OSError`` when there is no private key to sign with."""
    key = signing_key()
    if key is None:
        raise PermissionError(f"no private signing key at {_key_path()}: nothing is pickled")
    head = json.dumps(header, sort_keys=True).encode()
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    path = Path(path)
    temporary, handle = new_temporary(path)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(MAGIC + struct.pack("<Q", len(head)) + head)
            out.write(_signature(key, head, payload))
            out.write(payload)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def read_header(path: Path, label: str) -> dict:
    """The header of the file at ``path`` alone, its signature not checked (nothing is unpickled)."""
    with _opened(path) as raw:
        return _header(raw, path, label)[0]


def load_signed(path: Path, label: str, expect: dict | None = None) -> tuple[dict, object]:
    """The header and the value of the file at ``path``, once its label, the header entries
    ``expect`` gives (checked before the rest is read) and its signature are checked.

    Raises
    ------
    SignedFileUnusable
        Missing, of another label, not signed with this user's key, or damaged.
    """
    key = signing_key()
    if key is None:
        raise SignedFileUnusable(f"no private signing key at {_key_path()}")
    with _opened(path) as raw:
        header, head = _header(raw, path, label)
        if any(header.get(name) != value for name, value in (expect or {}).items()):
            raise SignedFileUnusable(f"{Path(path).name} was made for another key")
        signature = raw.read(_MAC_BYTES)
        payload = raw.read()
    if not hmac.compare_digest(_signature(key, head, payload), signature):
        raise SignedFileUnusable(f"{Path(path).name} is not signed by this user's key (or is damaged)")
    try:
        return header, pickle.loads(payload)
    except Exception as exc:  # noqa: BLE001 - signed but unreadable: classes changed without the key saying so
        raise SignedFileUnusable(f"{Path(path).name} cannot be read: {type(exc).__name__}: {exc}") from None


def _signature(key: bytes, head: bytes, payload: bytes) -> bytes:
    """The HMAC-SHA256 of a file's header (its length first) and payload."""
    mac = hmac.new(key, struct.pack("<Q", len(head)) + head, hashlib.sha256)
    mac.update(payload)
    return mac.digest()


def _opened(path: Path):
    try:
        return open_for_reading(Path(path))
    except FileNotFoundError:
        raise SignedFileUnusable(f"no {Path(path).name} yet") from None
    except (OSError, ValueError) as exc:
        raise SignedFileUnusable(f"{Path(path).name} cannot be read: {exc}") from None


def _header(raw, path: Path, label: str) -> tuple[dict, bytes]:
    name = Path(path).name
    if raw.read(len(MAGIC)) != MAGIC:
        raise SignedFileUnusable(f"{name} is not a signed file of this workbench")
    try:
        (length,) = struct.unpack("<Q", raw.read(8))
        head = raw.read(length)
        header = json.loads(head)
    except (struct.error, ValueError) as exc:
        raise SignedFileUnusable(f"{name} has a damaged header ({exc})") from None
    if not isinstance(header, dict) or header.get("label") != label:
        raise SignedFileUnusable(f"{name} holds another kind of file")
    return header, head
