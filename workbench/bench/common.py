"""What the benchmarks share: their one error, and passage vectors cached between runs."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

__all__ = ["PerfError", "cached_vectors"]


class PerfError(ValueError):
    """A benchmark argument or input that cannot be used."""


def cached_vectors(texts: list[str], embedder, cache_dir: Path) -> np.ndarray:
    """``embedder.embed(texts)``, kept as ``.npy`` under ``cache_dir/perf-vectors`` and keyed by
    the texts and the embedder's name, so a benchmark embeds a fixed passage set once."""
    digest = hashlib.sha256(("\n\x00".join(texts) + embedder.name).encode()).hexdigest()[:16]
    path = cache_dir / "perf-vectors" / f"{embedder.name}-{digest}.npy"
    if path.exists():
        return np.load(path)
    vectors = embedder.embed(texts)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors
