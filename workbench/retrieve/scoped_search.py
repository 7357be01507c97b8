"""One retrieval kept to some documents, as the MCP server's search tools run it: the document
filters resolved by the workspace's one scope resolver (:class:`~workbench.workspace.scoped_view.Scopes`),
the whole retrieval (seeds, walk, context, stats) run inside the view, the filters said beside it."""

from __future__ import annotations

from collections.abc import Sequence

from ..model import ScopedSearch
from ..workspace.scoped_view import Scopes
from . import retrieve

__all__ = ["scoped_search"]


def scoped_search(scopes: Scopes, query: str, mode: str = "hybrid", k: int | None = None,
                  documents: Sequence[str] | None = None, **options) -> ScopedSearch:
    """:func:`~workbench.retrieve.retrieve` of ``query`` over the documents ``documents`` match
    (ids or folder prefixes; None or empty: the whole corpus); ``options`` go to it as they are.

    Raises :class:`~workbench.workspace.scoped_view.ScopeUnmatched` for a filter that matches no
    stored document, and what :func:`~workbench.retrieve.retrieve` raises.
    """
    view = scopes(documents)
    return ScopedSearch(query, retrieve(view, query, mode=mode, k=k, **options), list(documents or []))
