"""The passage layer of one derivation kept with what made it, so that the next derivation links
again only the passages a write touched.

:func:`~workbench.context_graph.passages.link_passages` reads every passage against a name table
made from every entity's forms. A :class:`PassageState` keeps what that made: the name words each
key's forms give (the table is, for each name, the first key in sorted order that gives it, then
the titles' short forms where no name stands), each title's short forms, the names found in each
passage, each passage's entities and title links, which passages each title titles, and the
synonym comparison. A write's touched keys and chunks
(:class:`~workbench.context_graph.parts_state.Touched`) then say what to do again:

- the name words and short forms of the touched keys, and so the names whose key changed;
- reading again the passages that are new or whose text holds every word of a changed name as a
  whole word (a name matches a text only where the text has each of its words: :class:`NamesWritten`);
- the entities of the passages read again or touched, and the passages of the keys they gained or lost;
- the title links of those passages and of every passage naming a key whose links can change
  (it became common or rare, its short-form titles changed, or a title it links to gained or lost a passage);
- the synonym groups of the names that changed or joined or left the walk.

The layer is the one :func:`link_passages` makes (tested equal after random sequences of writes).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field

from ..extract.names import STOP_NAMES
from .folded_texts import FoldedTexts
from .passages import _ARTICLES, NameMatcher, NamesWritten, NameScan, PassageLayer, words_of
from .synonyms import SynonymScan, first_word_groups, synonym_scan, synonyms_changed
from .title_aliases import title_aliases, usable_aliases

__all__ = ["LinkOptions", "PassageState", "TextsOf"]

TextsOf = Callable[[Collection[str] | None], Iterable[tuple[str, str]]]
"""``texts_of(chunk ids)``: ``(chunk id, text)`` of those chunks (of every chunk, given None)."""


@dataclass(frozen=True)
class LinkOptions:
    """The settings a layer is linked with (a state made with others links every passage again)."""

    max_entity_passages: int
    title_link_weight: float
    synonym_threshold: float
    relation_weight: float


@dataclass
class _Strings:
    """What strings give, remembered across derivations (names recur write after write)."""

    words: dict[str, str] = field(default_factory=dict)
    short_forms: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def words_of(self, text: str) -> str:
        found = self.words.get(text)
        if found is None:
            found = self.words[text] = words_of(text)
        return found

    def short_words(self, title: str) -> tuple[str, ...]:
        """The words of ``title``'s short forms, each once, in order (what ``aliased_titles`` takes)."""
        found = self.short_forms.get(title)
        if found is None:
            found = self.short_forms[title] = tuple(dict.fromkeys(
                w for w in (self.words_of(alias) for alias in title_aliases(title)) if w))
        return found


def _name_words(strings: _Strings, forms: Iterable[str]) -> frozenset[str]:
    """The name words a key's forms give the matcher (the rules of :class:`NameMatcher`)."""
    names: set[str] = set()
    for form in forms:
        words = strings.words_of(form)
        for article in _ARTICLES:  # "The Beatles" is also written "the Beatles"
            if words.startswith(article) and len(words) > len(article):
                names.add(words[len(article):])
        names.add(words)
    return frozenset(w for w in names if w and w not in STOP_NAMES)


def _replace(mapping: dict, key, value) -> None:
    """Set ``mapping[key]`` to ``value``, or drop it when ``value`` is empty."""
    if value:
        mapping[key] = value
    else:
        mapping.pop(key, None)


class PassageState:
    """A passage layer and what made it (see the module docstring). The containers a layer shares
    are never changed: the next derivation works on copies of them. A state is followed once, so
    the name tables only a state reads pass to the next one as they are, and are changed there."""

    #: The containers only a state reads (the rest a layer shares, or the next state compares with
    #: this one's): taken over by the next state, not copied.
    _TAKEN_OVER = frozenset({"key_names", "givers", "names", "widths", "folded"})
    #: Made again from the names before anything reads them (:meth:`_short_forms`).
    _MADE_AGAIN = frozenset({"key_of", "linked"})

    def __init__(self, options: LinkOptions) -> None:
        self.options = options
        self.strings = _Strings()
        self.key_names: dict[str, frozenset[str]] = {}  # key -> the name words its forms give
        # name words -> the keys whose forms give them (None until a write follows: made from key_names)
        self.givers: dict[str, frozenset[str]] | None = {}
        self.names: dict[str, str] = {}  # name words -> key, before the titles' short forms
        self.widths: dict[int, int] = {}  # words in a name -> how many of self.names have that many
        self.titles: dict[str, tuple[str, tuple[str, ...], frozenset[str]]] = {}  # title key -> (title, short words, form words)
        self.short_keys: dict[str, tuple[str, ...]] = {}  # short-form words -> the title keys with them, sorted
        self.title_words: dict[str, int] = {}  # a title key's form words -> how many title keys have them
        self.key_of: dict[str, str] = {}  # the matcher's table
        self.short_names: frozenset[str] = frozenset()  # the short forms in it
        self.linked: dict[str, tuple[str, ...]] = {}  # key -> the titles a passage naming it links to
        self.found: dict[str, tuple[str, ...]] = {}
        self.entities_of: dict[str, frozenset[str]] = {}
        self.chunks_of: dict[str, tuple[str, ...]] = {}
        self.common: frozenset[str] = frozenset()
        self.title_of: dict[str, str] = {}
        self.titled: dict[str, tuple[str, ...]] = {}  # title key -> its passages, sorted
        self.links: dict[str, tuple[str, ...]] = {}  # passage -> the passages its title links go to, sorted
        self.synonyms: SynonymScan | None = None
        # the synonym comparison's first-word groups (None until a write follows: made from its words)
        self.groups: dict[str, frozenset[str]] | None = {}
        self.folded: FoldedTexts | None = None  # every passage's folded text, once a write follows

    def _fork(self) -> PassageState:
        state = PassageState(self.options)
        state.strings = self.strings  # strings only gain what they give: shared
        for name, value in vars(self).items():
            if isinstance(value, dict) and name not in self._TAKEN_OVER | self._MADE_AGAIN:
                setattr(state, name, value.copy())  # values are replaced, never changed: a shallow copy
            elif name not in ("options", "strings"):
                setattr(state, name, value)
        return state

    def followable(self) -> dict[str, frozenset[str]]:
        """Make what only a write that follows this state reads (each name's givers, the synonym
        groups), when a state made afresh left them out; returns the givers."""
        if self.givers is None:
            given_by: dict[str, set[str]] = {}
            for key, names in self.key_names.items():
                for words in names:
                    given_by.setdefault(words, set()).add(key)
            self.givers = {words: frozenset(found) for words, found in given_by.items()}
        if self.groups is None and self.synonyms is not None:
            self.groups = first_word_groups(self.synonyms.words)
        return self.givers

    def keep_texts(self, texts: Iterable[tuple[str, str]]) -> None:
        """Keep every passage's folded text (``texts``: each passage's id and text, as the record
        holds them now) before a write first follows, which would read them then."""
        if self.folded is None:
            self.folded = FoldedTexts(texts)

    @classmethod
    def link(cls, texts_of: TextsOf, chunk_ids: Collection[str], mentioned: Mapping[str, Iterable[str]],
             forms: Mapping[str, Iterable[str]], title_of: Mapping[str, str], names: Mapping[str, str],
             options: LinkOptions, previous: PassageState | None = None, touched_keys: Collection[str] | None = None,
             touched_chunks: Collection[str] = (), previous_scan: NameScan | None = None
             ) -> tuple[PassageState, PassageLayer]:
        """The layer of the passages ``chunk_ids`` (every chunk of the record) and the state it is
        kept in. With ``previous`` (the state of the last derivation) and the keys and chunks whose
        parts changed since (``touched_keys`` None: not known), only what they change is done again;
        else every passage is linked, reusing ``previous_scan`` where it stands."""
        incremental = previous is not None and previous.options == options and touched_keys is not None
        if previous is not None and touched_keys is not None and incremental:
            state = previous._fork()
            changed = state._names_of_keys(forms, touched_keys)
            gone = state.found.keys() - set(chunk_ids)  # with no mention, a passage is touched by no key
            retitled = {c for c in (*touched_chunks, *gone) if state.title_of.get(c) != title_of.get(c)}
        else:
            state = cls(options)
            state.strings = previous.strings if previous is not None else state.strings
            state.synonyms = previous_scan.synonyms if previous_scan is not None else None
            changed = state._names_of_keys(forms, forms.keys())
            gone, retitled = set(), set(title_of)
        titles_moved = state._retitle(retitled, title_of)
        title_keys_changed = {t for t in titles_moved if (t in state.titled) != (t in state.titles)}
        state._short_forms(forms, (set(touched_keys or ()) & (state.titled.keys() | state.titles.keys()))
                           | title_keys_changed if incremental else None)
        if previous is not None and incremental:
            changed |= {w for w in previous.short_names | state.short_names
                        if previous.key_of.get(w) != state.key_of.get(w)}
        longest = max(max((width for width, count in state.widths.items() if count), default=0),
                      max((words.count(" ") + 1 for words in state.short_names), default=0))
        matcher = NameMatcher.over_names(state.key_of, longest)  # the table is the names and the short forms
        if previous is not None and incremental:
            read = state._scan_changed(texts_of, chunk_ids, matcher, changed, gone)
            state._link(read | set(touched_chunks) | gone | retitled, chunk_ids, mentioned, title_of, titles_moved,
                        previous, touched_keys or (), forms, names)
        else:
            state._scan_all(texts_of, matcher, previous_scan)
            state._link(set(chunk_ids), chunk_ids, mentioned, title_of, titles_moved, None, (), forms, names)
        links = tuple((chunk, target) for chunk in sorted(state.links) for target in state.links[chunk])
        layer = PassageLayer(
            entities_of=state.entities_of, chunks_of=state.chunks_of, title_of=state.title_of, common=state.common,
            title_links=links, synonyms=state.synonyms.pairs if state.synonyms is not None else (), matcher=matcher,
            title_link_weight=options.title_link_weight, relation_weight=options.relation_weight,
            scan=NameScan(state.key_of, state.found, state.synonyms))
        return state, layer

    # -- the name table ---------------------------------------------------------------------------
    def _names_of_keys(self, forms: Mapping[str, Iterable[str]], keys: Iterable[str]) -> set[str]:
        """Take the name words of ``keys`` from their ``forms`` now; returns the names whose key
        (before the short forms) changed."""
        changed: set[str] = set()
        if not self.key_names:  # a state made afresh: each name goes to the first key in sorted order
            for key in sorted(keys):
                has = _name_words(self.strings, forms.get(key, ()))
                if has:
                    self.key_names[key] = has
                    for words in has:
                        self.names.setdefault(words, key)
            self.givers = None  # made when a write first follows (a fresh process may never)
            for words in self.names:
                width = words.count(" ") + 1
                self.widths[width] = self.widths.get(width, 0) + 1
            return set(self.names)
        givers_of = self.followable()
        for key in keys:
            had = self.key_names.get(key, frozenset())
            has = _name_words(self.strings, forms.get(key, ()))
            _replace(self.key_names, key, has)
            for words in had ^ has:
                was = givers_of.get(words, frozenset())
                _replace(givers_of, words, was - {key} if words in had else was | {key})
                before, giving = self.names.get(words), givers_of.get(words)
                now = min(giving) if giving else None
                _replace(self.names, words, now)
                if before != now:
                    changed.add(words)
                if (before is None) != (now is None):
                    width = words.count(" ") + 1
                    _replace(self.widths, width, self.widths.get(width, 0) + (1 if before is None else -1))
        return changed

    def _retitle(self, retitled: Iterable[str], title_of: Mapping[str, str]) -> set[str]:
        """Move the passages whose title changed between the titles' passages; returns the titles moved."""
        moved: set[str] = set()
        for chunk_id in sorted(retitled):
            was, now = self.title_of.get(chunk_id), title_of.get(chunk_id)
            if was is not None:
                _replace(self.titled, was, tuple(c for c in self.titled[was] if c != chunk_id))
                moved.add(was)
            if now is not None:
                ids = list(self.titled.get(now, ()))
                bisect.insort(ids, chunk_id)
                self.titled[now] = tuple(ids)
                moved.add(now)
        self.title_of = dict(title_of)
        return moved

    def _short_forms(self, forms: Mapping[str, Iterable[str]], keys: Iterable[str] | None) -> None:
        """Take the title, short forms and form words of the title ``keys`` (None: every title) now,
        then make the matcher's table: the names, then each usable short form where no name stands;
        and the titles a passage naming each key links to (what ``_titles_by_alias`` makes)."""
        self.key_of, self.linked, self.short_names = self.names.copy(), {}, frozenset()
        if self.options.title_link_weight <= 0:
            return
        for key in self.titled if keys is None else keys:
            if key in self.titles:
                _, shorts, had_words = self.titles.pop(key)
                for short in shorts:
                    _replace(self.short_keys, short, tuple(k for k in self.short_keys[short] if k != key))
                for w in had_words:
                    _replace(self.title_words, w, self.title_words[w] - 1)
            if key not in self.titled:
                continue
            title = max(forms.get(key) or (key,), key=len)
            shorts = self.strings.short_words(title)
            form_words = frozenset(self.strings.words_of(form) for form in forms.get(key, ()))
            self.titles[key] = (title, shorts, form_words)
            for short in shorts:
                ids = list(self.short_keys.get(short, ()))
                bisect.insort(ids, key)
                self.short_keys[short] = tuple(ids)
            for w in form_words:
                self.title_words[w] = self.title_words.get(w, 0) + 1
        short_names = set()
        for words, keys_of_words in usable_aliases(self.short_keys, self.title_words).items():
            if words not in self.key_of and words not in STOP_NAMES:
                self.key_of[words] = keys_of_words[0]
                short_names.add(words)
            named = self.key_of.get(words)
            if named is not None:
                self.linked[named] = tuple(dict.fromkeys(((named,) if named in self.titled else ())
                                                         + tuple(keys_of_words)))
        self.short_names = frozenset(short_names)

    # -- reading passages -------------------------------------------------------------------------
    def _scan_all(self, texts_of: TextsOf, matcher: NameMatcher, previous_scan: NameScan | None) -> None:
        """Every passage's names, reusing ``previous_scan`` where it stands."""
        reuse = previous_scan.reusable(matcher) if previous_scan is not None else None
        self.found = {}
        for chunk_id, text in texts_of(None):
            found = reuse(chunk_id, text) if reuse is not None else None
            self.found[chunk_id] = tuple(matcher.find(text)) if found is None else found

    def _scan_changed(self, texts_of: TextsOf, chunk_ids: Collection[str], matcher: NameMatcher,
                      changed: set[str], gone: set[str]) -> set[str]:
        """Read the passages that are new or hold every word of a changed name; the passages read.
        The passages' folded texts are kept from the first write that follows on
        (:class:`~workbench.context_graph.folded_texts.FoldedTexts`)."""
        for chunk_id in gone:
            del self.found[chunk_id]
        fresh = [chunk_id for chunk_id in chunk_ids if chunk_id not in self.found]
        new = dict(texts_of(fresh)) if fresh else {}
        if self.folded is None:
            self.folded = FoldedTexts(texts_of(None))
        else:
            self.folded.follow(new, gone)
        written = NamesWritten(changed)
        again = (set(self.found) if written.too_many else self.folded.holding(written)) - new.keys()
        texts = dict(texts_of(sorted(again))) if again else {}
        for chunk_id in [c for c in self.found if c in texts] + fresh:
            text = texts[chunk_id] if chunk_id in texts else new[chunk_id]
            self.found[chunk_id] = tuple(matcher.find(text))
        return again | set(fresh)

    # -- linking ----------------------------------------------------------------------------------
    def _link(self, redo: set[str], chunk_ids: Collection[str], mentioned: Mapping[str, Iterable[str]],
              title_of: Mapping[str, str], titles_moved: set[str], previous: PassageState | None,
              touched_keys: Collection[str], forms: Mapping[str, Iterable[str]], names: Mapping[str, str]) -> None:
        """The entities of the passages in ``redo``, the passages of the keys they gained or lost,
        the common keys, the title links that can change and the synonym comparison."""
        gained: dict[str, list[str]] = {}
        lost: dict[str, set[str]] = {}
        if previous is None:  # every passage linked afresh: each key's passages come in sorted order
            self.entities_of = {}
            for chunk_id in sorted(redo):
                keys = set(mentioned.get(chunk_id, ())) | set(self.found[chunk_id])
                if chunk_id in title_of:
                    keys.add(title_of[chunk_id])
                self.entities_of[chunk_id] = frozenset(keys)
                for key in keys:
                    gained.setdefault(key, []).append(chunk_id)
            redo = set()
            self.chunks_of = {key: tuple(ids) for key, ids in gained.items()}
        for chunk_id in sorted(redo):
            before = self.entities_of.pop(chunk_id, frozenset())
            now: frozenset[str] = frozenset()
            if chunk_id in self.found:  # a passage of the record
                keys = set(mentioned.get(chunk_id, ())) | set(self.found[chunk_id])
                if chunk_id in title_of:
                    keys.add(title_of[chunk_id])
                now = self.entities_of[chunk_id] = frozenset(keys)
            for key in now - before:
                gained.setdefault(key, []).append(chunk_id)
            for key in before - now:
                lost.setdefault(key, set()).add(chunk_id)
        moved = gained.keys() | lost.keys()
        for key in moved if previous is not None else ():
            out = lost.get(key, ())
            _replace(self.chunks_of, key, tuple(sorted([c for c in self.chunks_of.get(key, ()) if c not in out]
                                                       + gained.get(key, []))))
        limit = self.options.max_entity_passages
        was_common = self.common
        self.common = frozenset(key for key, ids in self.chunks_of.items() if len(ids) > limit) if previous is None \
            else frozenset((was_common - moved) | {key for key in moved if len(self.chunks_of.get(key, ())) > limit})
        flipped = was_common ^ self.common
        self._title_links(redo, titles_moved, previous, flipped)

        def shown(key: str) -> str:  # the entity's name, else its first form (what link_passages compares)
            return names[key] if key in names else next(iter(forms.get(key) or ()), key)

        threshold = self.options.synonym_threshold
        if threshold >= 1.0:
            self.synonyms = None
        elif previous is None or self.synonyms is None:
            walked = sorted(key for key in self.chunks_of if key not in self.common)
            self.synonyms = synonym_scan({key: shown(key) for key in walked}, threshold, self.synonyms)
            self.groups = None  # made when a write first follows (a fresh process may never)
        else:
            self.followable()
            assert self.groups is not None
            changes = {key: shown(key) if key in self.chunks_of and key not in self.common else None
                       for key in set(touched_keys) | moved | flipped}
            self.synonyms = synonyms_changed(self.synonyms, changes, self.groups)

    def _title_links(self, redo: set[str], titles_moved: set[str], previous: PassageState | None,
                     flipped: frozenset[str]) -> None:
        if self.options.title_link_weight <= 0:
            self.links = {}
            return
        if previous is None:
            self.links = {}
            relink: Iterable[str] = self.entities_of
        else:
            keys = set(flipped)
            keys |= {key for key in previous.linked.keys() | self.linked.keys()
                     if previous.linked.get(key) != self.linked.get(key)}
            keys |= {key for key, titles in (*previous.linked.items(), *self.linked.items())
                     if titles_moved.intersection(titles)}
            keys |= {title for title in titles_moved if title not in previous.linked or title not in self.linked}
            relink = set(redo) | {chunk_id for key in keys
                                  for chunk_id in (*self.chunks_of.get(key, ()), *previous.chunks_of.get(key, ()))}
        for chunk_id in relink:
            linked = self.entities_of.get(chunk_id)
            targets: set[str] = set()
            own = self.title_of.get(chunk_id)
            for key in linked - self.common if linked is not None else ():
                if key != own:
                    targets.update(target for title in self.linked.get(key, (key,)) if title != own
                                   for target in self.titled.get(title, ()) if target != chunk_id)
            _replace(self.links, chunk_id, tuple(sorted(targets)))
