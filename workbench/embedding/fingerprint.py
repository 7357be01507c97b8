"""What names an export in the cache: a fingerprint of the model's files, the export's version
and its configuration, kept beside the exports so a fresh process need not hash the model again."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

__all__ = ["EXPORT_VERSION", "MEMO_FILE", "SOURCE_FILES", "model_fingerprint"]

#: Raised whenever an export's contents change for the same model: older exports are made again.
EXPORT_VERSION = "1"
#: The file in the export cache that keeps each model's fingerprint under its files' sizes and times.
MEMO_FILE = "fingerprints.json"
#: The model's files an export is made from (those present are fingerprinted).
SOURCE_FILES = ("config.json", "tokenizer.json", "sentence_bert_config.json", "modules.json", "1_Pooling/config.json",
                "model.safetensors", "pytorch_model.bin")


def model_fingerprint(model_path: Path, tag: str, cache: Path | None = None) -> str:
    """16 hex digits of the model files' bytes, :data:`EXPORT_VERSION` and ``tag`` (and the
    calibration, for int8): what names an export's folder in the cache.

    Hashing the model's files would cost every fresh process's first query, so the result is
    kept in ``cache``/:data:`MEMO_FILE` under the files' sizes and modification times, and used
    while they stand (an installed package's files change only by a new install)."""
    from .quantize import CALIBRATION_FILE, calibration_mark

    sources = [model_path / name for name in SOURCE_FILES]
    mark = ""
    if tag.startswith("openvino-int8"):  # its activation ranges come from the calibration set, by NNCF
        sources.append(CALIBRATION_FILE)
        mark = calibration_mark()
    present = [path for path in sources if path.is_file()]
    stamp = hashlib.sha256(json.dumps([EXPORT_VERSION, tag, mark, str(model_path.resolve())] + [
        [str(path), path.stat().st_size, path.stat().st_mtime_ns] for path in present]).encode()).hexdigest()
    memo_file = cache / MEMO_FILE if cache is not None else None
    memo = _read_memo(memo_file)
    if stamp in memo:
        return memo[stamp]
    digest = hashlib.sha256(f"{EXPORT_VERSION}:{tag}".encode())
    if mark:
        digest.update(mark.encode())
    for path in present:
        digest.update(path.name.encode())
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    fingerprint = digest.hexdigest()[:16]
    if memo_file is not None:
        _write_memo(memo_file, {**memo, stamp: fingerprint})
    return fingerprint


def _read_memo(path: Path | None) -> dict[str, str]:
    try:
        memo = json.loads(path.read_text(encoding="utf-8")) if path is not None else {}
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in memo.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(memo, dict) else {}


def _write_memo(path: Path, memo: dict[str, str]) -> None:
    """Replace the memo file atomically; a read-only or full cache only costs the next process the hashing."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False, encoding="utf-8") as out:
            json.dump(memo, out)
        os.replace(out.name, path)
    except OSError:
        pass
