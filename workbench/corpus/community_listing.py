"""The community reports as a reader asks for them: every one, each theme followed by its
sub-themes, or one by its id (``communities``, the MCP tool of that name).

Examples
--------
>>> from workbench.model import CommunityReport
>>> report = lambda id, parent=None: CommunityReport(id, id, 3, (id,), [], [], [], level=int(parent is not None),
...                                                  parent=parent)
>>> [r.id for r in nested_order([report("a"), report("b"), report("a1", "a"), report("b1", "b")])]
['a', 'a1', 'b', 'b1']
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..model import CommunityListing, CommunityReport
from .summaries import current_summaries

if TYPE_CHECKING:
    from .workspace_view import WorkspaceView

__all__ = ["community_listing", "nested_order"]


def nested_order(reports: Iterable[CommunityReport]) -> list[CommunityReport]:
    """Reports with each community followed by its parts (depth first), the given order kept among siblings."""
    reports = list(reports)
    known = {r.id for r in reports}
    children: dict[str, list[CommunityReport]] = {}
    for r in reports:
        children.setdefault(r.parent if r.parent in known else "", []).append(r)  # type: ignore[arg-type]
    ordered: list[CommunityReport] = []

    def visit(parent: str) -> None:
        for r in children.get(parent, []):
            ordered.append(r)
            visit(r.id)

    visit("")
    return ordered


def community_listing(ws: WorkspaceView, community_id: str | None = None) -> CommunityListing:
    """Every community report of the workspace, each theme followed by its sub-themes, or the one
    called ``community_id``; with how the summaries were come by (stored, or built now) and the
    record version they describe.

    Raises
    ------
    KeyError
        When no community is called ``community_id`` (the message lists those there are).
    """
    summaries = current_summaries(ws)
    every = nested_order(summaries.reports)
    chosen = [summaries.report(community_id)] if community_id else every
    return CommunityListing(chosen, stored=summaries.stored, built=summaries.built, kept=summaries.kept,
                            themes_from=summaries.themes_from, every_report=every)
