"""Write the small benchmark slices under ``tests/data/bench`` from the full sets.

The tests never read the full sets (they sit outside the repository, in ``../shared/bench``);
this script is how the committed slices were made, and remakes them the same way:

    python tests/data/make_bench_slices.py ../shared/bench

Each slice keeps the first ``QUESTIONS`` questions of a set, every gold passage of those
questions, and the earliest other passages in corpus order up to ``PASSAGES`` passages, so every
kept question can be answered from its slice.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

SETS = {"musique": 30, "hotpotqa": 30, "2wikimultihopqa": 2}  # questions kept per set
PASSAGES = 300
HERE = Path(__file__).resolve().parent / "bench"


def slice_set(source: Path, target: Path, questions: int, passages: int = PASSAGES) -> tuple[int, int]:
    """Write ``target/corpus.jsonl`` and ``target/queries.jsonl``; return (passages, questions)."""
    corpus = [line for line in (source / "corpus.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    queries = [line for line in (source / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    kept_queries = queries[:questions]
    gold = {g for q in kept_queries for g in json.loads(q)["gold_ids"]}
    room = max(passages - len(gold), 0)
    keep = set(gold)
    for line in corpus:
        if room == 0:
            break
        pid = json.loads(line)["id"]
        if pid not in keep:
            keep.add(pid)
            room -= 1
    kept = [line for line in corpus if json.loads(line)["id"] in keep]
    target.mkdir(parents=True, exist_ok=True)
    (target / "corpus.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
    (target / "queries.jsonl").write_text("\n".join(kept_queries) + "\n", encoding="utf-8")
    return len(kept), len(kept_queries)


def main(source: Path) -> None:
    for name, questions in SETS.items():
        n_passages, n_questions = slice_set(source / name, HERE / name, questions)
        print(f"{name}: {n_passages} passages, {n_questions} questions")
    shutil.copytree(source / "licenses", HERE / "licenses", dirs_exist_ok=True)


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/bench"))
