"""The entity-name index's sync after one write's new names, written whole against its delta.

``python -m workbench.bench.name_index [names] [added] [rounds]`` builds an index of ``names``
generated names with random 384-dimension unit vectors (MiniLM's width), then, alternating in one process, copies it and syncs ``added`` more names into
each copy: once with the base written whole, once with the delta. It prints each round's sync
and a new reader's first name search, as JSON lines.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ..vectors.entity_vectors import DELTA_FROM_ROWS, EntityVectors

__all__ = ["bench_name_index_sync"]


def bench_name_index_sync(names: int = 412_705, added: int = 40, rounds: int = 3, seed: int = 0):
    """Yield one dict per measurement (see the module's docstring)."""
    rng = np.random.default_rng(seed)

    def embed(batch: list[str]) -> np.ndarray:
        rows = rng.standard_normal((len(batch), 384)).astype(np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    held = {f"entity {i:07d}": f"Entity name {i}" for i in range(names)}
    grown = {**held, **{f"new {i}": f"New name {i}" for i in range(added)}}
    root = Path(tempfile.mkdtemp(prefix="name-index-"))
    try:
        first = root / "first"
        first.mkdir()
        started = time.perf_counter()
        EntityVectors(first).sync(held, "1", "random", embed)
        yield {"first_write_s": round(time.perf_counter() - started, 2),
               "file_mib": round((first / "entity_vectors.npz").stat().st_size / 2**20)}
        for round_ in range(rounds):
            for how, from_rows in (("whole", names + 1), ("delta", min(DELTA_FROM_ROWS, names))):
                folder = root / f"{how}-{round_}"
                shutil.copytree(first, folder)
                index = EntityVectors(folder, delta_from_rows=from_rows)
                index.version()  # loaded, as a writing process holds it
                started = time.perf_counter()
                index.sync(grown, "2", "random", embed)
                sync_s = time.perf_counter() - started
                reader = EntityVectors(folder)
                started = time.perf_counter()
                reader.query(embed(["question"])[0], 10)
                yield {"round": round_, "written": how, "sync_s": round(sync_s, 2),
                       "first_search_s": round(time.perf_counter() - started, 2)}
                shutil.rmtree(folder)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    for line in bench_name_index_sync(*(int(a) for a in sys.argv[1:4])):
        print(json.dumps(line), flush=True)
