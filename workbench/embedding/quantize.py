"""Static int8 quantization of the OpenVINO export, by NNCF, calibrated on a shipped text set.

``embedding.backend: openvino-int8`` runs the model with int8 weights *and* activations: NNCF's
post-training quantization with its transformer preset (SmoothQuant, fast bias correction, the
sensitive operations kept in floating point) measures the activation ranges on
:data:`CALIBRATION_FILE` and writes an OpenVINO model whose matrix products run in int8 (VNNI
where the CPU has it). It is the default because it is the fastest backend whose MuSiQue dense
R@5 stays within a point of torch's (``bench perf``'s embedding section measures both; the
figures are in docs/models.md).

The calibration set is the bundled sample corpus's chunks and entity names (our own text, no
licence to carry), exactly as an ingest with the default settings makes them: long and short
texts both, since a workspace embeds passages and names alike. :func:`calibration_set` derives
it from a workspace, and a test keeps the file equal to what the sample corpus gives.

NNCF, like OpenVINO, has a usage-statistics client; it is imported with its CI switch set, which
replaces the client with a stub that sends and writes nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

if TYPE_CHECKING:
    from ..model import Chunk, Mention

__all__ = ["CALIBRATION_FILE", "CALIBRATION_BATCH", "calibration_mark", "calibration_texts", "calibration_set", "quantize_int8"]

#: The texts the activation ranges are measured on (JSON: ``{"source", "chunks", "names"}``).
CALIBRATION_FILE = Path(__file__).parent.parent / "data" / "calibration.json"
#: Texts per calibration batch; batches are made as the embedder makes them (by length).
CALIBRATION_BATCH = 8


def calibration_mark(path: Path = CALIBRATION_FILE) -> str:
    """What decides the int8 export's vectors beside the model: the calibration set's bytes and
    NNCF's version, as 8 hex digits. It is part of the embedder's name, so that vectors of two
    calibrations are never taken for one another (in the cache or in Chroma)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        nncf = version("nncf")
    except PackageNotFoundError:
        nncf = "absent"
    return hashlib.sha256(path.read_bytes() + f"nncf {nncf}".encode()).hexdigest()[:8]


def calibration_texts(path: Path = CALIBRATION_FILE) -> list[str]:
    """The calibration chunks and names, longest first (the order the embedder batches in)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return sorted(data["chunks"] + data["names"], key=len, reverse=True)


class _Mentions(Protocol):
    def mentions(self) -> list[Mention]: ...


class _Corpus(Protocol):
    """What the calibration set reads of a workspace."""

    @property
    def store(self) -> _Mentions: ...

    def chunks(self) -> list[Chunk]: ...


def calibration_set(ws: _Corpus) -> dict:
    """The calibration set a workspace gives: its chunk texts and its mention surfaces, sorted.

    :data:`CALIBRATION_FILE` is ``json.dumps(calibration_set(ws), indent=0, ensure_ascii=False)``
    and a newline, for the sample corpus's workspace."""
    chunks = sorted({c.text for c in ws.chunks()})
    names = sorted({m.surface for m in ws.store.mentions()})
    return {"source": "sample_corpus/ ingested with the default settings: its chunks and entity names",
            "chunks": chunks, "names": names}


def _import_nncf():
    """``import nncf`` with its usage statistics off (its CI switch makes the client a stub)."""
    from .base import import_quietly

    already = "nncf" in sys.modules
    module = import_quietly("nncf", {"NNCF_CI": "1", "CI": "true"})
    if not already:
        module.set_log_level(logging.ERROR)  # no advice or warnings in the log (progress bars: see below)
    return module


def quantize_int8(model: Any, feed: Callable[[Sequence[str]], dict], texts: Sequence[str] | None = None) -> Any:
    """``model`` (an ``openvino.Model``) with int8 matrix products, calibrated on ``texts``
    (default :func:`calibration_texts`), each batch tokenized by ``feed``."""
    nncf = _import_nncf()
    texts = list(texts) if texts is not None else calibration_texts()
    batches = [feed(texts[i:i + CALIBRATION_BATCH]) for i in range(0, len(texts), CALIBRATION_BATCH)]
    # NNCF draws progress bars on stdout whatever its log level: they would land in `--json` output.
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return nncf.quantize(model, nncf.Dataset(batches), model_type=nncf.ModelType.TRANSFORMER,
                             subset_size=len(batches))
