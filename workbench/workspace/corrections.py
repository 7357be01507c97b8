"""The user's corrections of the graph, as steps of a workspace: aliases, splits, rejected
suggestions, their undo, accepted candidate relations, and the merge suggestions offered.

:class:`Corrections` is a part of :class:`~workbench.workspace.workspace.Workspace`
(``ws.corrections``): every step is logged in the merge log of the record, under the write lock,
and leaves the graph and everything derived from the record current (a rerun after a crash
logs once).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ..context_graph.declared_aliases import declared_alias_suggestions
from ..context_graph.merge_suggestions import (MergeSuggestion, SuggestionPage, combine_suggestions,
                                              cross_language_suggestions,
                                              lookalike_suggestions, page_of, rank_suggestions, suggest_merges)
from ..text.name_keys import display_form, name_key
from ..vectors.embedding_cache import CacheFirstEmbedder
from ..model import Triple

if TYPE_CHECKING:
    from ..context_graph.graph import ContextGraph
    from ..embedding import Embedder
    from ..model import Entity
    from ..record.store import Store
    from ..settings import Settings
    from ..vectors.entity_vectors import EntityVectors
    from .write_lock import WriteLock

__all__ = ["Corrections", "LinkedNames", "EMBEDDING_SUGGESTION_LIMIT", "SPELLING_SUGGESTION_LIMIT"]

#: Above this many entities, merge suggestions compare spellings only, not name embeddings.
EMBEDDING_SUGGESTION_LIMIT = 5000
#: Above this many entities, spellings are compared among this many most mentioned names only:
#: the pairs to check grow faster than the names where many are near-identical.
SPELLING_SUGGESTION_LIMIT = 20_000


class LinkedNames(Mapping[str, set[str]]):
    """Display name -> the names it is linked to in ``graph`` (either way, co-mention included),
    read when asked: translations ask for the few names they pair, where the whole map grows
    with every name."""

    def __init__(self, graph: ContextGraph) -> None:
        self._graph = graph
        self._key = {name: key for key, name in graph.names().items()}

    def __getitem__(self, name: str) -> set[str]:
        key, graph = self._key[name], self._graph
        return {graph.name(e.target) for e in graph.out_edges(key)} | {graph.name(e.source) for e in graph.in_edges(key)}

    def __iter__(self) -> Iterator[str]:
        return iter(self._key)

    def __len__(self) -> int:
        return len(self._key)


class CorrectedWorkspace(Protocol):
    """What the corrections read and write of their workspace."""

    store: Store
    settings: Settings
    embedder: Embedder
    entity_vectors: EntityVectors
    lock: WriteLock

    @property
    def graph(self) -> ContextGraph: ...

    def entities(self) -> list[Entity]: ...

    def derive_after_write(self) -> None: ...


class Corrections:
    """The corrections of one workspace (see the module docstring)."""

    def __init__(self, ws: CorrectedWorkspace) -> None:
        self.ws = ws

    def add_alias(self, alias: str, canonical: str) -> None:
        """Merge ``alias`` into ``canonical``: from now on both are one entity."""
        if not name_key(alias) or not name_key(canonical):
            raise ValueError("an alias and its canonical name must both contain letters or digits")
        if name_key(alias) == name_key(canonical):
            # One name key, but a split may keep them apart: merging them again undoes the split.
            split = next((f for f in (alias, canonical) if display_form(f).lower() in self.ws.store.splits()), None)
            if split is None:
                raise ValueError(f"{alias!r} and {canonical!r} are already one name")
            self.unsplit(split)
            return
        self._alias_action("alias", alias, canonical, {})

    def _alias_action(self, action: str, alias: str, canonical: str, extra: dict) -> None:
        detail = {"alias": alias, "canonical": canonical, **extra}
        current = self.ws.store.aliases().get(alias)
        done = current == canonical  # a rerun, after a crash say: log it once
        if current is not None and not done:
            detail["replaced"] = current  # so that an undo restores it
        self._canon_action(action, detail, done, alias=(alias, canonical))

    def accept_suggestion(self, alias: str, canonical: str) -> None:
        """Accept a suggested merge: ``alias`` becomes a name of ``canonical`` (one log entry)."""
        if not name_key(alias) or not name_key(canonical) or name_key(alias) == name_key(canonical):
            raise ValueError(f"cannot merge {alias!r} into {canonical!r}: they need two different names")
        self._alias_action("accept", alias, canonical, {})

    def remove_alias(self, alias: str) -> None:
        """Undo an alias the user added."""
        aliases = self.ws.store.aliases()
        done = False
        canonical = aliases.get(alias)
        if alias not in aliases:
            last = (self.ws.store.merge_log() or [{}])[-1]
            if not (last.get("action") == "unalias" and last.get("alias") == alias):
                raise KeyError(f"no user alias {alias!r}; aliases: {', '.join(aliases) or 'none'}")
            done, canonical = True, last.get("canonical")  # the last step removed it: a rerun completes it
        self._canon_action("unalias", {"alias": alias, "canonical": canonical}, done, unalias=alias)

    def split(self, form: str) -> None:
        """Give a surface form an entity of its own, undoing the merge that folded it in."""
        key = display_form(form).lower()
        self._canon_action("split", {"form": display_form(form)}, key in self.ws.store.splits(), split=key)

    def unsplit(self, form: str) -> None:
        key = display_form(form).lower()
        self._canon_action("unsplit", {"form": display_form(form)}, key not in self.ws.store.splits(), unsplit=key)

    def reject_suggestion(self, a: str, b: str) -> None:
        pair = tuple(sorted((name_key(a), name_key(b))))
        self._canon_action("reject", {"a": a, "b": b}, pair in self.ws.store.rejected_suggestions(), reject=pair)

    def undo(self, entry_id: int) -> int:
        """Undo one entry of the merge log by recording its inverse (itself a log entry).

        An alias is removed (or the alias it replaced restored), a removed alias comes back, a
        split is folded back in and the reverse, a rejected suggestion is suggested again.
        Returns the id of the new entry.

        Raises
        ------
        KeyError
            No entry has that id.
        ValueError
            The entry is an undo itself, was already undone, or does not say enough to invert.
        """
        log = {entry["id"]: entry for entry in self.ws.store.merge_log()}
        entry = log.get(entry_id)
        if entry is None:
            raise KeyError(f"no merge log entry #{entry_id}; the log has {len(log)} entries")
        undone = {e.get("undoes") for e in log.values()}
        if entry_id in undone:
            raise ValueError(f"merge log entry #{entry_id} is already undone")
        if entry["action"] == "undo":
            raise ValueError(f"merge log entry #{entry_id} is an undo; make the change again instead")
        action, base = entry["action"], {"undoes": entry_id, "of": entry["action"]}
        change: dict[str, Any]
        if action in ("alias", "accept"):
            if entry.get("replaced"):
                change = {"alias": (entry["alias"], entry["replaced"])}
            else:
                change = {"unalias": entry["alias"]}
            detail = {**base, "alias": entry["alias"], "canonical": entry.get("canonical"),
                      "restored": entry.get("replaced")}
        elif action == "unalias":
            if not entry.get("canonical"):
                raise ValueError(f"merge log entry #{entry_id} does not say which name the alias pointed to; "
                                 "add the alias again instead")
            change = {"alias": (entry["alias"], entry["canonical"])}
            detail = {**base, "alias": entry["alias"], "canonical": entry["canonical"]}
        elif action in ("split", "unsplit"):
            form = display_form(entry["form"]).lower()
            change = {"unsplit": form} if action == "split" else {"split": form}
            detail = {**base, "form": entry["form"]}
        elif action == "reject":
            change = {"unreject": tuple(sorted((name_key(entry["a"]), name_key(entry["b"]))))}
            detail = {**base, "a": entry["a"], "b": entry["b"]}
        else:
            raise ValueError(f"merge log entry #{entry_id} ({action}) cannot be undone")
        undo = self._canon_action("undo", detail, **change)
        assert undo is not None  # an undo is recorded anew, never found already done
        return undo

    def _canon_action(self, action: str, detail: dict, already_done: bool = False, **change) -> int | None:
        """Apply and log one action, returning its log entry's id; one already in the record is
        only completed (entity vectors synced), so a rerun after a crash leaves one entry."""
        with self.ws.lock.hold():
            entry = None if already_done else self.ws.store.record(action, detail, **change)
            self.ws.derive_after_write()
        return entry

    def accept_candidate(self, subject: str, relation: str, obj: str) -> int:
        """Accept a candidate relation as a graph fact (it is stated by its chunks from now on).

        Raises
        ------
        ValueError
            When no candidate ``subject -relation-> obj`` is stored; the message lists a few that are.
        """
        with self.ws.lock.hold():
            changed = self.ws.store.accept_candidate(subject, relation, obj)
            if changed:
                self.ws.derive_after_write()
        if not changed:
            known = [f"{t.subject} -{t.relation}-> {t.object}" for t in self.candidates()[:5]]
            raise ValueError(f"no candidate {subject} -{relation}-> {obj}; candidates: {', '.join(known) or 'none'}")
        return changed

    def candidates(self) -> list[Triple]:
        """Relations discovered automatically (``SIMILAR_TO`` between similar notes), with their
        confidence, most confident first: suggestions for a person to check, kept out of the graph."""
        return self.ws.store.candidate_triples()

    def merge_log(self) -> list[dict]:
        return self.ws.store.merge_log()

    def suggestions(self, use_embeddings: bool = True) -> list[MergeSuggestion]:
        """Names that look like one entity but are not yet, each with why, minus those the user
        rejected, ranked by evidence (:func:`~workbench.context_graph.merge_suggestions.rank_suggestions`): pairs a note or a
        glossary record declares (``A (B)``, ``A, also called B``), then look-alikes (a name mixing
        Latin with Cyrillic or Greek letters and the name it imitates), then a Chinese name whose
        gloss is an English one (backed by shared neighbours), then similar meaning, then similar
        spelling alone. Numbers, years and dates are never suggested."""
        graph = self.ws.graph
        names = [e.name for e in self.ws.entities()]
        rejected = self.ws.store.rejected_suggestions()
        # Every pair of name embeddings is compared: past a few thousand names that matrix
        # alone takes gigabytes, so large graphs rely on spelling and the synonym edges.
        use_embeddings = use_embeddings and len(names) <= EMBEDDING_SUGGESTION_LIMIT
        embedder = CacheFirstEmbedder(self.ws.embedder, self.ws.store, self.ws.entity_vectors) if use_embeddings else None
        similar = suggest_merges(names[:SPELLING_SUGGESTION_LIMIT], embedder,  # the most mentioned names
                                 self.ws.settings.canonicalization.suggest_threshold)
        # The synonym edges the walk follows, so accepting or rejecting one changes retrieval.
        synonyms = [MergeSuggestion(graph.name(a), graph.name(b), score,
                                    f"near-identical names (trigram similarity {score:.2f}; a synonym edge in the walk)")
                    for a, b, score in graph.passages.synonyms]
        translated = cross_language_suggestions(names, LinkedNames(graph))
        declared = declared_alias_suggestions(names, ((c.document_id, c.text) for c in self.ws.store.chunks()))
        lookalikes = lookalike_suggestions(names, tuple(self.ws.settings.canonicalization.articles))
        found = rank_suggestions(combine_suggestions(lookalikes, declared, translated, similar, synonyms))
        return [s for s in found if tuple(sorted((name_key(s.a), name_key(s.b)))) not in rejected]

    def suggestion_page(self, page: int = 1, per_page: int = 12, use_embeddings: bool = True) -> SuggestionPage:
        """Page ``page`` (from 1) of :meth:`suggestions`, with their total; ``ValueError`` naming the
        pages there are for a page past the last."""
        return page_of(self.suggestions(use_embeddings), page, per_page)
