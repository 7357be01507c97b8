"""YAML read with bounds: no aliases, a size cap, a depth cap.

An alias (``*x``) makes YAML a compression format: nine levels of ``&a [*b, *b, ...]`` in a
387-byte front matter expand to billions of nodes (an "alias bomb"). Nothing the workbench
reads (front matter, ``settings.yaml``, task files) needs aliases, so :func:`load` refuses
them, together with text over a size cap and nesting deeper than a depth cap, each with a
:class:`YAMLRefused` saying which. Anchors without aliases are harmless and allowed.

Examples
--------
>>> load("tags: [a, b]")
{'tags': ['a', 'b']}
>>> load("x: &a [1, 2]\\ny: *a")
Traceback (most recent call last):
...
workbench.text.safe_yaml.YAMLRefused: uses the YAML alias *a (line 2); aliases are refused, since they can expand without bound
>>> load("tags: [a]", max_bytes=4)
Traceback (most recent call last):
...
workbench.text.safe_yaml.YAMLRefused: is 9 bytes, larger than the 4-byte limit for this YAML
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["YAMLRefused", "load", "MAX_DEPTH"]

#: Deepest nesting of lists and mappings accepted.
MAX_DEPTH = 100


class YAMLRefused(ValueError):
    """YAML not read because it could blow up: an alias, too many bytes, too deep."""


class _BoundedLoader(yaml.SafeLoader):
    """The safe loader, refusing aliases and nesting deeper than :data:`MAX_DEPTH`."""

    _depth = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise YAMLRefused(f"uses the YAML alias *{event.anchor} (line {event.start_mark.line + 1}); "
                              "aliases are refused, since they can expand without bound")
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise YAMLRefused(f"is nested more than {MAX_DEPTH} levels deep (line {mark.line + 1})")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def load(text: str, max_bytes: int | None = None) -> Any:
    """Parse one YAML document with :class:`_BoundedLoader`.

    Raises
    ------
    YAMLRefused
        For an alias, more than ``max_bytes`` bytes (UTF-8), or nesting over :data:`MAX_DEPTH`.
    yaml.YAMLError
        For YAML that does not parse.
    """
    if max_bytes is not None:
        size = len(text.encode("utf-8", errors="surrogatepass"))
        if size > max_bytes:
            raise YAMLRefused(f"is {size} bytes, larger than the {max_bytes}-byte limit for this YAML")
    return yaml.load(text, Loader=_BoundedLoader)
