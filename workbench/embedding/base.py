"""What every embedder shares: the protocol, the error, the names and the import switches.

Every embedder returns L2-normalised float32 rows, so a dot product is the cosine similarity.
Importing this module sets the switches that keep the model libraries offline and quiet.
"""

from __future__ import annotations

import hashlib
import os
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

__all__ = ["BUNDLED", "Embedder", "EmbeddingUnavailable", "LEGACY_NAME", "STATIC_PREFIX", "import_quietly", "text_hash"]

# The model ships inside a pip package; nothing may be fetched from a hub at run time.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

BUNDLED = "bundled:all-MiniLM-L6-v2"
#: The name of the bundled model run by torch: the vectors every workspace held before backends
#: existed, so its cache entries and Chroma collections keep their original, unsuffixed keys.
LEGACY_NAME = "all-MiniLM-L6-v2"
#: ``embedding.model`` values with this prefix select the static embedder: ``static`` or ``static:<dimension>``.
STATIC_PREFIX = "static"


class EmbeddingUnavailable(RuntimeError):
    """The embedding model cannot be loaded or run; retrieval falls back to keywords."""


@runtime_checkable
class Embedder(Protocol):
    """What the workbench needs of an embedding model."""

    name: str
    """Identifies the model; cached vectors are keyed by it."""
    dimension: int
    """Length of each vector."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts into an ``(len(texts), dimension)`` float32 array of unit rows."""
        ...


def text_hash(text: str) -> str:
    """Content hash that keys the embedding cache.

    >>> text_hash("redis") == text_hash("redis")
    True
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def import_quietly(module: str, environ: dict[str, str]):
    """``import module`` with ``environ`` set for the import only (already imported: as it is).

    OpenVINO and NNCF decide at import whether to report usage; the switches that neither send
    nor write anything are environment variables they read then."""
    import importlib
    import sys

    if module in sys.modules:
        return sys.modules[module]
    saved = {key: os.environ.get(key) for key in environ}
    os.environ.update(environ)
    try:
        return importlib.import_module(module)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
