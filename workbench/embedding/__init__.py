"""Text embedders: one protocol, the backends that run the bundled MiniLM, and a factory.

- :mod:`~workbench.embedding.base`: the :class:`Embedder` protocol, :class:`EmbeddingUnavailable`,
  the model names and :func:`text_hash` (what the cache is keyed by);
- :mod:`~workbench.embedding.torch_backend`: :class:`SentenceTransformerEmbedder`, the
  sentence-transformer run by torch (``embedding.backend: torch``);
- :mod:`~workbench.embedding.exported`: the model exported once and run by ONNX Runtime or
  OpenVINO (the other backends), with :mod:`~workbench.embedding.quantize` for the int8 one;
- :mod:`~workbench.embedding.static`: the static embedder distilled from MiniLM (``static``);
- :mod:`~workbench.embedding.distributed`: the configured embedder run by Ray actors;
- :mod:`~workbench.embedding.factory`: :func:`embedder_from_settings`, the one that picks.

Every embedder returns L2-normalised float32 rows, so a dot product is the cosine similarity.
The backends import their libraries (torch, onnxruntime, openvino, ray) on first use only.
"""

from __future__ import annotations

from .base import BUNDLED, LEGACY_NAME, STATIC_PREFIX, Embedder, EmbeddingUnavailable, text_hash
from .factory import embedder_from_settings, in_process_embedder
from .torch_backend import SentenceTransformerEmbedder

__all__ = ["BUNDLED", "Embedder", "EmbeddingUnavailable", "LEGACY_NAME", "SentenceTransformerEmbedder", "STATIC_PREFIX",
           "embedder_from_settings", "in_process_embedder", "text_hash"]
