"""The object a user opens: a folder holding the record, its vector store and what is derived
from them, kept current by one write step.

:class:`Workspace` is the whole API of a workspace; this package's modules are its parts (the
write step of :mod:`.ingest_pipeline` and :mod:`.note_links`, merges, pinned and background
reads, scoped views, a watched folder).
"""

from .workspace import DEFAULT_WORKSPACE, ChunkNotFound, Workspace, WorkspaceBusy, WorkspaceError, WorkspaceMissing

__all__ = ["Workspace", "WorkspaceBusy", "WorkspaceError", "WorkspaceMissing", "ChunkNotFound", "DEFAULT_WORKSPACE"]
