"""Which folder a workspace's record was made in, so a copied folder is told apart from it.

A workspace names its collections on a Chroma server by its workspace id, kept in the record; a
folder copied with ``cp -r`` keeps that id, so the copy and the original would write and repair
one set of collections (the copy's ingest broke the original's queries, the original's
``repair`` deleted the copy's vectors). The record also keeps the identity of the folder it
lives in (its inode, which a copy never shares and a rename keeps): a workspace on a Chroma
server whose folder is not that one is refused until ``repair --new-identity`` gives it an id of
its own, its vectors copied into its own collections; an embedded copy (its store is its own)
takes a new id at its first write step. Derived files are keyed by the id, so a copy's are made
again and a sibling copy's are never taken for its own.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> folder_identity(folder) == folder_identity(folder), folder_identity(folder) == folder_identity(folder.parent)
(True, False)
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import numpy as np

from ..vectors.index import NeedsRepair

__all__ = ["HOME_KEY", "WorkspaceCopied", "copied_message", "folder_identity", "new_identity"]

#: The record's meta key holding the identity of the folder it lives in.
HOME_KEY = "home"


class WorkspaceCopied(NeedsRepair):
    """The workspace folder is a copy of another one whose collections on a Chroma server it names."""


def folder_identity(path: Path) -> str:
    """The inode of the folder ``path``: a copy gets its own, a rename keeps it (the device is
    left out: its number can change from one boot or mount to the next)."""
    return str(os.stat(path).st_ino)


def copied_message(store, path: Path) -> str | None:
    """Why the workspace at ``path`` must not use its server collections (it is a copy), else None.

    A record that names no folder yet (made before this check) names none: the first write step
    records its folder."""
    home = store.meta(HOME_KEY)
    if home is None or home == folder_identity(path):
        return None
    return (f"workspace {path} is a copy of another workspace folder (its record was made in another folder): "
            f"both would use the collections {store.workspace_id} names on the Chroma server. Run "
            f"python -m workbench --workspace {path} repair --new-identity to give this copy collections of its own "
            "(after a move to another disk, the same command records the new place)")


def record_home(store, path: Path) -> None:
    """Record ``path`` as the folder of the workspace's record, when none is recorded yet."""
    if store.meta(HOME_KEY) is None:
        store.set_meta(HOME_KEY, folder_identity(path))


def new_identity(store, client, prefix: str, path: Path, rename: bool = False, batch: int = 1000
                 ) -> tuple[str, str, int]:
    """Give the workspace at ``path`` a new id: copy every collection of its old id on ``client``
    (each vector space's chunks) to the new id's name, then record the id and the folder. The
    old collections are left to the workspace they belong to; with ``rename`` (a store in the
    folder, which no other workspace reads) they are renamed instead. ``client`` None: no store
    yet. Returns ``(old id, new id, vectors copied)``. Call it holding the write lock."""
    old, new = store.workspace_id, uuid.uuid4().hex[:12]
    copied = 0
    names = [getattr(c, "name", c) for c in client.list_collections()] if client is not None else []
    for name in sorted(n for n in names if n.startswith(f"{prefix}_{old}_")):
        source = client.get_collection(name, embedding_function=None)
        target_name = f"{prefix}_{new}_" + name[len(f"{prefix}_{old}_"):]
        if rename:
            source.modify(name=target_name)
            continue
        target = client.get_or_create_collection(target_name, configuration={"hnsw": {"space": "cosine"}},
                                                 metadata=source.metadata or None, embedding_function=None)
        ids = sorted(source.get(include=[])["ids"])
        for lo in range(0, len(ids), batch):
            part = source.get(ids=ids[lo:lo + batch], include=["embeddings", "metadatas"])
            target.upsert(ids=part["ids"], embeddings=np.asarray(part["embeddings"], dtype=np.float32),
                          metadatas=part["metadatas"])
        copied += len(ids)
    store.set_meta("workspace_id", new)
    store.set_meta(HOME_KEY, folder_identity(path))
    return old, new, copied
