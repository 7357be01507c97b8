"""Canonical names: aliases, splits and the merge record, over the name keys of :mod:`workbench.text.name_keys`;
the merge suggestions are :mod:`workbench.context_graph.merge_suggestions` (:func:`name_key` importable from here too).

Every merge is derived from the mentions and the alias table, so it can be inspected and
undone: two surface forms are one entity when their :func:`name_key` is equal, or when an
alias (settings or user) maps one key onto the other. A *split* gives one written form a key
of its own, ``"<name key>~<form>"`` (``<form>`` is the display form in lower case), so it
leaves the entity it would otherwise join and no alias applies to it.

Examples
--------
>>> name_key("The Auth Service")
'authservice'
>>> canon = Canonicalizer(aliases={"authsvc": "Auth Service"}, splits={"auth-service"})
>>> canon.key("AuthSvc"), canon.key("auth service"), canon.key("auth-service")
('authservice', 'authservice', 'authservice~auth-service')
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping

from ..model import Merge, Mention, SurfaceForm

from ..text.name_keys import DEFAULT_ARTICLES, display_form, name_key

__all__ = ["Canonicalizer", "FormTally", "build_merges", "display_names", "form_reasons"]


class Canonicalizer:
    """Maps a surface form to its canonical key: name key, then split, then aliases.

    Parameters
    ----------
    aliases : mapping of str to str
        Alias name -> canonical name from the settings. Both sides go through
        :func:`name_key`.
    user_aliases : mapping of str to str
        The same, set by the user; these override settings aliases for the same alias key.
    splits : set of str
        Surface forms that keep a key of their own, compared by lower-cased
        :func:`display_form`. Their key is ``"<name key>~<lower display form>"``.
    articles : iterable of str
        Leading words dropped from names.

    Notes
    -----
    Aliases are applied transitively (``a -> b -> c`` gives ``c``). A cycle does not hang:
    every key on the cycle resolves to the smallest key of the cycle, so the names on it
    still become one entity.

    Examples
    --------
    >>> c = Canonicalizer(aliases={"pg": "Postgres"}, user_aliases={"postgres": "PostgreSQL"})
    >>> c.key("PG"), c.explain("PG")
    ('postgresql', ('alias (settings)', 'alias (user)'))
    >>> Canonicalizer(aliases={"a1": "b1", "b1": "a1"}).key("b1")
    'a1'
    """

    def __init__(
        self,
        aliases: Mapping[str, str] | None = None,
        user_aliases: Mapping[str, str] | None = None,
        splits: Iterable[str] | None = None,
        articles: Iterable[str] = DEFAULT_ARTICLES,
    ) -> None:
        self.articles = tuple(articles)
        # alias key -> (target key, origin); user entries replace settings entries.
        edges: dict[str, tuple[str, str]] = {}
        for mapping, origin in ((aliases or {}, "alias (settings)"), (user_aliases or {}, "alias (user)")):
            for alias, canonical in mapping.items():
                source, target = self._name_key(alias), self._name_key(canonical)
                if source and target and source != target:
                    edges[source] = (target, origin)
        self._alias_edges = edges
        self._resolved: dict[str, tuple[str, tuple[str, ...]]] = {
            source: self._follow(source) for source in edges
        }
        self.splits = frozenset(display_form(s, self.articles).lower() for s in (splits or ()))
        self._cache: dict[str, tuple[str, tuple[str, ...]]] = {}

    def _name_key(self, name: str) -> str:
        return name_key(name, self.articles)

    def _follow(self, start: str) -> tuple[str, tuple[str, ...]]:
        """Resolve an alias chain; on a cycle, the smallest key on the cycle wins."""
        path = [start]
        reasons: list[str] = []
        seen = {start: 0}
        current = start
        while current in self._alias_edges:
            target, origin = self._alias_edges[current]
            if origin not in reasons:
                reasons.append(origin)
            if target in seen:
                return min(path[seen[target]:]), tuple(reasons)
            seen[target] = len(path)
            path.append(target)
            current = target
        return current, tuple(reasons)

    @property
    def alias_sources(self) -> frozenset[str]:
        """The name keys an alias maps elsewhere: only surfaces of these keys (or split forms) can
        change key when the aliases change."""
        return frozenset(self._alias_edges)

    def explain(self, surface: str) -> tuple[str, ...]:
        """Which alias tables were used to reach the key of ``surface`` (empty if none)."""
        return self._lookup(surface)[1]

    def key(self, surface: str) -> str:
        """The canonical key of a surface form."""
        return self._lookup(surface)[0]

    def is_split(self, surface: str) -> bool:
        """Whether ``surface`` is one of the split forms."""
        return display_form(surface, self.articles).lower() in self.splits

    def _lookup(self, surface: str) -> tuple[str, tuple[str, ...]]:
        cached = self._cache.get(surface)
        if cached is not None:
            return cached
        if self.splits and self.is_split(surface):
            result: tuple[str, tuple[str, ...]] = (f"{self._name_key(surface)}~{display_form(surface, self.articles).lower()}", ())
        else:
            base = self._name_key(surface)
            result = self._resolved.get(base, (base, ()))
        if len(self._cache) > 200_000:  # bound memory on huge corpora
            self._cache.clear()
        self._cache[surface] = result
        return result


def _form_order(item: tuple[str, int]) -> tuple[int, int, str]:
    """Most frequent first; ties: the longest, then alphabetical."""
    form, count = item
    return (-count, -len(form), form)


class FormTally:
    """Counts the surface forms of each canonical key, a mention at a time: what the merge record
    is made of (:meth:`merges`). :meth:`tap` counts the mentions a derivation streams past, so
    the record is not read twice for the merges."""

    def __init__(self, canonicalizer: Canonicalizer) -> None:
        self.canonicalizer = canonicalizer
        #: key -> display form -> [count, chunk ids in first-seen order]
        self.groups: dict[str, dict[str, list]] = defaultdict(dict)
        # Each surface is resolved once: a corpus repeats its names (far fewer
        # entities than mentions), more of them than the canonicalizer's own bounded memo keeps.
        self._resolved: dict[str, tuple[str, str]] = {}

    def add(self, mention: Mention) -> None:
        known = self._resolved.get(mention.surface)
        if known is None:
            known = self._resolved[mention.surface] = (self.canonicalizer.key(mention.surface),
                                                       display_form(mention.surface, self.canonicalizer.articles))
        key, form = known
        if not key:
            return
        entry = self.groups[key].setdefault(form, [0, {}])
        entry[0] += 1
        entry[1].setdefault(mention.chunk_id, None)

    def count(self, mentions: Iterable[Mention]) -> FormTally:
        """Count every one of ``mentions``; returns the tally."""
        for mention in mentions:
            self.add(mention)
        return self

    def tap(self, mentions: Iterable[Mention]) -> Iterator[Mention]:
        """``mentions``, each counted as it passes."""
        for mention in mentions:
            self.add(mention)
            yield mention

    def merges(self) -> list[Merge]:
        """The merge record of the mentions counted (see :func:`build_merges`)."""
        canonicalizer = self.canonicalizer
        merges = []
        for key, forms in self.groups.items():
            if len(forms) < 2:
                continue
            ordered = sorted(((f, e[0]) for f, e in forms.items()), key=_form_order)
            surface_forms = [SurfaceForm(f, c, tuple(forms[f][1])) for f, c in ordered]
            reasons: list[str] = []
            base_keys = {name_key(f, canonicalizer.articles) for f in forms}
            if len(forms) > len(base_keys):  # two forms share a name key
                reasons.append("name key")
            for form in forms:
                for reason in canonicalizer.explain(form):
                    if reason not in reasons:
                        reasons.append(reason)
            merges.append(Merge(canonical=ordered[0][0], key=key, surface_forms=surface_forms, reasons=reasons))
        merges.sort(key=lambda m: (-sum(f.count for f in m.surface_forms), m.key))
        return merges


def build_merges(mentions: Iterable[Mention], canonicalizer: Canonicalizer) -> list[Merge]:
    """The merge record: every canonical key written in two or more distinct forms.

    Surface forms are compared by :func:`display_form` and listed most frequent first with
    their counts and chunk ids. ``Merge.canonical`` is the first of them.

    Examples
    --------
    >>> ms = [Mention("Auth Service", "c1"), Mention("auth-service", "c2"),
    ...       Mention("Auth Service", "c3"), Mention("Redis", "c1")]
    >>> [(m.canonical, m.key, [(f.form, f.count) for f in m.surface_forms], m.reasons)
    ...  for m in build_merges(ms, Canonicalizer())]
    [('Auth Service', 'authservice', [('Auth Service', 2), ('auth-service', 1)], ['name key'])]
    """
    return FormTally(canonicalizer).count(mentions).merges()


def display_names(mentions: Iterable[Mention], canonicalizer: Canonicalizer) -> dict[str, str]:
    """Display name of every canonical key: its most frequent surface form.

    Examples
    --------
    >>> display_names([Mention("redis", "c1"), Mention("Redis", "c2"), Mention("Redis", "c3")],
    ...               Canonicalizer())
    {'redis': 'Redis'}
    """
    names = {}
    for key, forms in FormTally(canonicalizer).count(mentions).groups.items():
        names[key] = min(((f, e[0]) for f, e in forms.items()), key=_form_order)[0]
    return names


# -- why each form is in its entity -------------------------------------------------------------

def form_reasons(merge: Merge, canonicalizer: Canonicalizer) -> dict[str, str]:
    """Surface form -> why it belongs to the merge: the canonical form, a shared name key, or
    the alias that maps it (each form its own reason, not the merge's).

    Examples
    --------
    >>> c = Canonicalizer(user_aliases={"login service": "Auth Service"})
    >>> merge = build_merges([Mention("Auth Service", "c1"), Mention("Auth Service", "c2"),
    ...                       Mention("auth-service", "c3"), Mention("login service", "c4")], c)[0]
    >>> for form, why in form_reasons(merge, c).items():
    ...     print(form, "|", why)
    Auth Service | canonical: the most frequent form
    login service | alias (user): login service → Auth Service
    auth-service | same name key as Auth Service (authservice)
    """
    canonical_key = name_key(merge.canonical, canonicalizer.articles)
    reasons = {}
    for form in merge.surface_forms:
        explained = canonicalizer.explain(form.form)
        if form.form == merge.canonical:
            reasons[form.form] = "canonical: the most frequent form"
        elif canonicalizer.is_split(form.form):
            reasons[form.form] = "split out by the user"
        elif explained:
            reasons[form.form] = f"{' then '.join(explained)}: {form.form} → {merge.canonical}"
        elif name_key(form.form, canonicalizer.articles) == canonical_key:
            reasons[form.form] = f"same name key as {merge.canonical} ({canonical_key})"
        else:
            reasons[form.form] = f"same name key ({name_key(form.form, canonicalizer.articles)})"
    return reasons






