"""The Context Graph Workbench: a cited context graph beside a vector store.

The public API, each imported on first use so that ``python -m workbench --help`` stays quick:

- :class:`Workspace` (from ``workbench.workspace.workspace``): open a folder, ingest documents, query the graph;
- :func:`retrieve` (from ``workbench.retrieve``): one retrieval mode over a workspace, a ``RetrievalResult``;
- :func:`load_settings` (from ``workbench.settings``): ``settings.yaml`` into the one settings model;
- the retrieval contract (from ``workbench.model``): :class:`RetrievalResult`, its :class:`Hit`
  objects with their :class:`Why`, :class:`RetrievalStats`, :class:`GraphContext` and the
  :class:`Seed`, :class:`Hop`, :class:`GraphPath` and :class:`PathStep` inside them, each with
  ``to_json()``.

``workbench.retrieve`` names both the function and the package of strategies that defines it:
the package is callable as its function, so ``from workbench import retrieve; retrieve(ws, query)``
and ``from workbench.retrieve import MODES`` both work.

>>> import workbench
>>> from workbench.retrieve import MODES, retrieve as the_function
>>> callable(workbench.retrieve), "hybrid" in MODES, the_function.__module__
(True, True, 'workbench.retrieve')
>>> workbench.Why(similarity=0.5).to_json()
{'similarity': 0.5}
"""

from __future__ import annotations

import sys
import types
from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
#: The retrieval contract, exported from ``workbench.model``.
_RESULTS = ("RetrievalResult", "Hit", "Why", "RetrievalStats", "GraphContext", "Seed", "Hop", "GraphPath", "PathStep")

__all__ = ["Workspace", "retrieve", "load_settings", "RetrievalResult", "Hit", "Why", "RetrievalStats", "GraphContext",
           "Seed", "Hop", "GraphPath", "PathStep", "__version__"]

#: Public name -> the module that defines it.
_EXPORTS = {"Workspace": "workbench.workspace.workspace", "load_settings": "workbench.settings",
            **{name: "workbench.model" for name in _RESULTS}}

if TYPE_CHECKING:
    from .model import GraphContext, GraphPath, Hit, Hop, PathStep, RetrievalResult, RetrievalStats, Seed, Why
    from .retrieve import retrieve
    from .settings import load_settings
    from .workspace.workspace import Workspace


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _CallablePackage(types.ModuleType):
    """The package ``workbench.retrieve``, callable as its ``retrieve`` function."""

    def __call__(self, *args, **kwargs):
        return self.retrieve(*args, **kwargs)


class _Package(types.ModuleType):
    # The import system sets ``workbench.retrieve`` to the subpackage when it loads it; this
    # property catches that assignment and makes the subpackage callable as the function.
    @property
    def retrieve(self):
        return import_module("workbench.retrieve")  # the setter below ran while it loaded

    @retrieve.setter
    def retrieve(self, subpackage: types.ModuleType) -> None:
        subpackage.__class__ = _CallablePackage


sys.modules[__name__].__class__ = _Package
