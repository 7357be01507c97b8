"""The lists a surface prints: entities, merges, candidate relations, the installable models.

Each is a typed list whose ``to_json()`` is a JSON list, the shape ``entities --json``,
``merges --json``, ``candidates --json`` and ``models list --json`` print.

Examples
--------
>>> from workbench.model import Merge, SurfaceForm, Triple
>>> MergeList([Merge("Redis", "redis", [SurfaceForm("redis", 2, ("c1",))], ["name key"])]).to_json()
[{'canonical': 'Redis', 'key': 'redis', 'reasons': ['name key'], 'surface_forms': [{'form': 'redis', 'count': 2, 'chunks': ['c1']}]}]
>>> CandidateList([Triple("auth", "uses", "redis", "c4", confidence=0.912345)]).to_json()
[{'subject': 'auth', 'relation': 'uses', 'object': 'redis', 'confidence': 0.9123, 'chunk': 'c4'}]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .corpus import Triple
from .graph import Entity, Merge
from .jsonable import to_json

__all__ = ["EntityList", "MergeList", "CandidateList", "ModelState", "ModelList", "ModelInstalled"]


@dataclass
class EntityList:
    """Entities, most mentioned first."""

    entities: list[Entity]

    def to_json(self) -> list[dict[str, Any]]:
        return [to_json(e) for e in self.entities]


@dataclass
class MergeList:
    """Every entity that folds two or more ways of writing its name, with counts and chunks."""

    merges: list[Merge]

    def to_json(self) -> list[dict[str, Any]]:
        return [{"canonical": m.canonical, "key": m.key, "reasons": list(m.reasons),
                 "surface_forms": [{"form": f.form, "count": f.count, "chunks": list(f.chunk_ids)}
                                   for f in m.surface_forms]} for m in self.merges]


@dataclass
class CandidateList:
    """Relations found automatically (similar notes, a language model's triples), to check: not facts."""

    candidates: list[Triple]

    def to_json(self) -> list[dict[str, Any]]:
        return [{"subject": t.subject, "relation": t.relation, "object": t.object,
                 "confidence": round(t.confidence, 4), "chunk": t.chunk_id} for t in self.candidates]


@dataclass(frozen=True)
class ModelState:
    """One chat model or embedder a user can install, and whether it is installed."""

    name: str
    """Its name for ``models install``."""
    kind: str
    """``chat`` or ``embedder``."""
    title: str
    """What it is, in words."""
    licence: str
    """Its licence."""
    packages: tuple[str, ...]
    """The pinned registry packages it is installed from."""
    path: str
    """Its file, when installed and its hash checked; else empty."""
    state: str
    """``installed, hash checked``, or why not."""
    install: str
    """The command that installs it."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self)


@dataclass
class ModelList:
    """Every installable model, in the catalogue's order."""

    models: list[ModelState] = field(default_factory=list)

    def to_json(self) -> list[dict[str, Any]]:
        return [m.to_json() for m in self.models]


@dataclass(frozen=True)
class ModelInstalled:
    """A model installed, its file's hash checked."""

    name: str
    path: str
    verified: bool = True

    def to_json(self) -> dict[str, Any]:
        return to_json(self)
