"""Episodes found by a typed text: the sessions whose document, participants, entities or
decisions hold it, any case (``episodes --find``, the Timeline page's search).

Examples
--------
>>> from workbench.model import Decision, Episode
>>> said = Decision("We roll back the auth service.", "c1", "2024-05-02T09:40:00Z", "@mara")
>>> episodes = [Episode(f"e{i}", "chat/ops.jsonl", None, None, [("@sam", 2)], ["Redis"], []) for i in range(45)]
>>> episodes[7] = Episode("e7", "chat/ops.jsonl", None, None, [("@mara", 1)], ["Auth Service"], [said])
>>> [e.id for e in find_episodes(episodes, "roll BACK")], len(find_episodes(episodes, "  "))
(['e7'], 45)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..model import Episode, EpisodeSearch
from .summaries import current_episodes

if TYPE_CHECKING:
    from .workspace_view import WorkspaceView

__all__ = ["find_episodes", "search_episodes"]


def _words(episode: Episode) -> str:
    return "\n".join([episode.document, *(speaker for speaker, _ in episode.participants), *episode.entities,
                      *(decision.text for decision in episode.decisions)]).casefold()


def find_episodes(episodes: Sequence[Episode], text: str) -> list[Episode]:
    """The episodes whose document, participants, entities or decisions hold ``text`` (any case),
    in their order; all of them for an empty text."""
    wanted = text.strip().casefold()
    if not wanted:
        return list(episodes)
    return [episode for episode in episodes if wanted in _words(episode)]


def search_episodes(ws: WorkspaceView, text: str | None = None) -> EpisodeSearch:
    """The workspace's episodes that hold ``text`` (every one for none), and how many it has."""
    every = current_episodes(ws)
    return EpisodeSearch(find_episodes(every, text or ""), text=text or "", searched=len(every))
