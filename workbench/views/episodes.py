"""Episodes as a person reads them: found by typed text (:func:`~workbench.corpus.episode_search.find_episodes`)
and shown a page at a time.

A chat archive falls into tens of thousands of sessions, too many to draw as open panels at
every rerun: the Timeline page shows :data:`EPISODES_A_PAGE` at a time, of those a typed text finds.

Examples
--------
>>> from workbench.model import Decision, Episode
>>> said = Decision("We roll back the auth service.", "c1", "2024-05-02T09:40:00Z", "@mara")
>>> episodes = [Episode(f"e{i}", "chat/ops.jsonl", None, None, [("@sam", 2)], ["Redis"], []) for i in range(45)]
>>> episodes[7] = Episode("e7", "chat/ops.jsonl", None, None, [("@mara", 1)], ["Auth Service"], [said])
>>> [e.id for e in find_episodes(episodes, "roll BACK")], len(find_episodes(episodes, "  "))
(['e7'], 45)
>>> shown, pages = episode_page(episodes, 3)
>>> [e.id for e in shown], pages
(['e40', 'e41', 'e42', 'e43', 'e44'], 3)
"""

from __future__ import annotations

from collections.abc import Sequence

from ..corpus.episode_search import find_episodes
from ..model import Episode

__all__ = ["EPISODES_A_PAGE", "episode_page", "find_episodes", "page_count"]

#: Sessions shown at once, each an open panel of its participants, entities and decisions.
EPISODES_A_PAGE = 20


def page_count(items: int, size: int = EPISODES_A_PAGE) -> int:
    """Pages of ``size`` that ``items`` fill (at least one, so an empty list has a page)."""
    return max(1, -(-items // size))


def episode_page(episodes: Sequence[Episode], page: int, size: int = EPISODES_A_PAGE) -> tuple[list[Episode], int]:
    """Page ``page`` (from 1, kept within the pages there are) of ``episodes``, and the pages."""
    pages = page_count(len(episodes), size)
    page = min(max(page, 1), pages)
    return list(episodes[(page - 1) * size:page * size]), pages
