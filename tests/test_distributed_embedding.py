"""embedding.distributed: ray, on a real local Ray cluster of 2 CPUs with the real bundled model:
the vectors of the Ray actors are the in-process embedder's bit for bit, for the default backend
and for torch, and an ingest with them stores the same chunk vectors."""

from __future__ import annotations

import functools
import os
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import ROOT, SAMPLE

from workbench.embedding.distributed import RayEmbedder, connect_ray
from workbench.embedding import EmbeddingUnavailable, embedder_from_settings, in_process_embedder
from workbench.settings import Settings, SettingsError

CLUSTER_CPUS = 2


def varied_texts() -> list[str]:
    """About 200 texts: the sample corpus's paragraphs (English and Chinese), names, the empty
    string, repeats, many texts of one length (ties in every sort) and texts past the model's
    256 tokens."""
    paragraphs = []
    for path in sorted(SAMPLE.rglob("*.md")):
        paragraphs += [p.strip() for p in path.read_text(encoding="utf-8").split("\n\n") if p.strip()]
    texts = paragraphs[:120]
    texts += ["", " ", "Redis", "redis", "Auth Service", "令牌缓存", "认证服务依赖 Redis 缓存令牌。", "x" * 7, "y" * 7, "z" * 7]
    texts += [f"service-{i:03d} calls queue-{i % 7}" for i in range(40)]  # 40 texts of one length
    texts += [" ".join(paragraphs[i:i + 12]) for i in range(0, 40, 10)]  # long: truncated at 256 tokens
    texts += [f"名称 {i}" for i in range(6)]
    texts += texts[:15]  # repeats
    return texts


class Backends:
    """One pair (in process, on Ray) at a time: the actors of one pair take both CPUs of the cluster."""

    def __init__(self):
        self.current: tuple[str, object, RayEmbedder] | None = None

    def pair(self, backend: str, in_process) -> tuple[object, RayEmbedder]:
        if self.current is None or self.current[0] != backend:
            self.release()
            settings = Settings()
            settings.embedding.backend = backend
            settings.embedding.distributed = "ray"
            settings.embedding.ray_actors = CLUSTER_CPUS
            distributed = embedder_from_settings(settings)
            assert isinstance(distributed, RayEmbedder)
            self.current = (backend, in_process, distributed)
        return self.current[1], self.current[2]

    def release(self) -> None:
        if self.current is not None:
            self.current[2].close()
            self.current = None


@pytest.fixture(scope="module")
def cluster():
    """A local Ray cluster of two CPUs for the module, started as RayEmbedder starts one: a new
    cluster, even where RAY_ADDRESS names one to join (here one that does not exist)."""
    import ray

    if ray.is_initialized():
        ray.shutdown()
    saved = os.environ.get("RAY_ADDRESS")
    os.environ["RAY_ADDRESS"] = "127.0.0.1:1"
    try:
        assert connect_ray(None, CLUSTER_CPUS) is True
    finally:
        if saved is None:
            os.environ.pop("RAY_ADDRESS", None)
        else:
            os.environ["RAY_ADDRESS"] = saved
    assert ray.cluster_resources().get("CPU") == CLUSTER_CPUS
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def backends(cluster):
    made = Backends()
    yield made
    made.release()


@pytest.fixture(scope="module")
def torch_embedder():
    settings = Settings()
    settings.embedding.backend = "torch"
    return in_process_embedder(settings.embedding)


@pytest.fixture(scope="module")
def texts():
    made = varied_texts()
    assert 190 <= len(made) <= 230
    return made


class PassesByHalves:
    """A fake embedder (for tests of the guards, not of vectors): its name says whether it runs
    in the test's process, so on an actor it names another vector space."""

    dimension = 4

    def __init__(self, driver_pid: int):
        self.name = "fake" if os.getpid() == driver_pid else f"fake-on-{os.getpid()}"

    def batches(self, texts):
        half = max(1, len(texts) // 2)
        return [np.arange(0, half), np.arange(half, len(texts))]

    def embed(self, texts):
        return np.ones((len(texts), self.dimension), dtype=np.float32) / 2


def test_ray_usage_stats_are_off_and_no_dashboard_runs(cluster):
    from ray._common.usage import usage_lib

    assert not usage_lib.usage_stats_enabled()
    logs = Path(cluster._private.worker._global_node.get_session_dir_path()) / "logs"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the head writes its decision a moment after start
        log = logs / "dashboard.log"
        if log.is_file() and "Usage reporting is disabled." in log.read_text(errors="replace"):
            break
        time.sleep(0.5)
    else:
        pytest.fail(f"the Ray head never logged that usage reporting is disabled (logs in {logs})")
    assert "http server disabled" in (logs / "dashboard.log").read_text(errors="replace")


def test_an_actor_in_another_vector_space_is_refused(cluster, backends):
    backends.release()
    distributed = RayEmbedder(functools.partial(PassesByHalves, os.getpid()), actors=1)
    with pytest.raises(EmbeddingUnavailable, match="embeds as fake-on-.* this process as fake"):
        distributed.embed(["a", "b", "c"])
    distributed.close()


def test_more_actors_than_the_cluster_has_cpus_is_refused_naming_the_setting(cluster, backends):
    distributed = RayEmbedder(functools.partial(PassesByHalves, os.getpid()), actors=CLUSTER_CPUS + 1)
    with pytest.raises(EmbeddingUnavailable, match="embedding.ray_actors: 3 actors .* has 2 CPUs"):
        distributed.embed(["a", "b"])


def test_a_missing_ray_is_named_with_the_setting_and_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    settings = Settings()
    settings.embedding.distributed = "ray"
    with pytest.raises(SettingsError, match=r"embedding.distributed: 'ray' needs the ray package.*pip install"):
        embedder_from_settings(settings)


def test_the_ray_extra_pins_the_ray_the_tests_run_and_the_runtime_needs_none():
    import tomllib

    import ray

    def pins(name: str) -> list[str]:
        lines = (line.split("#")[0].strip() for line in (ROOT / name).read_text(encoding="utf-8").splitlines())
        return [line for line in lines if line.startswith("ray")]

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert extras["ray"] == pins("requirements-dev.txt") == [f"ray=={ray.__version__}"]
    assert pins("requirements.txt") == []


def test_the_static_embedder_is_not_distributed():
    settings = Settings()
    settings.embedding.model = "static:64"
    settings.embedding.distributed = "ray"
    with pytest.raises(SettingsError, match="embedding.distributed: none"):
        embedder_from_settings(settings)


def test_consecutive_passes_of_the_exported_backend_embedded_together_make_the_same_passes(embedder, texts):
    assert embedder.passes_combine
    passes = embedder.batches(texts)
    rng = np.random.default_rng(3)
    for _ in range(50):
        lo = int(rng.integers(0, len(passes)))
        run = passes[lo:lo + int(rng.integers(1, 6))]
        rows = np.concatenate(run)
        again = embedder.batches([texts[i] for i in rows])
        offsets = np.cumsum([0] + [len(p) for p in run])
        assert [a.tolist() for a in again] == [list(range(a, b)) for a, b in zip(offsets[:-1], offsets[1:])]


@pytest.mark.parametrize("backend", ["default", "torch"])
def test_ray_vectors_are_the_in_process_vectors_bit_for_bit(backend, backends, embedder, torch_embedder, texts):
    in_process = embedder if backend == "default" else torch_embedder
    local, distributed = backends.pair(Settings().embedding.backend if backend == "default" else "torch", in_process)
    assert distributed.name == local.name  # one vector space: the same cache entries and collections
    expected = local.embed(texts)
    got = distributed.embed(texts)
    assert distributed.batches_sent == len(local.batches(texts)) > CLUSTER_CPUS  # the actors did the work
    # The exported backends' passes go in runs (a few per actor), torch's one per call.
    combine = getattr(local, "passes_combine", False)
    assert CLUSTER_CPUS <= distributed.calls_sent <= (CLUSTER_CPUS * 4 if combine else distributed.batches_sent)
    assert len(distributed.nodes) == CLUSTER_CPUS
    assert got.dtype == np.float32 and got.shape == (len(texts), local.dimension)
    if backend == "default":
        assert np.array_equal(got, expected)
    else:  # torch in a Ray actor: a few rows a float32 step apart on AVX-512 Xeons (identical on the EPYCs)
        assert np.allclose(got, expected, rtol=0, atol=1e-6)
        assert (got != expected).any(axis=1).sum() <= len(texts) // 20
    # Order kept, said another way: each row's nearest in-process vector is its own text's ("" and
    # " " are one token sequence, so one vector).
    nearest = (got @ expected.T).argmax(axis=1)
    assert np.array_equal(expected[nearest], expected)
    # Another order forms other passes; the Ray path still forms the in-process ones.
    shuffled = [texts[i] for i in np.random.default_rng(7).permutation(len(texts))[:50]]
    assert np.array_equal(distributed.embed(shuffled), local.embed(shuffled))


def test_a_call_of_one_forward_pass_runs_in_this_process(backends, embedder):
    _, distributed = backends.pair(Settings().embedding.backend, embedder)
    sent = distributed.batches_sent
    one = distributed.embed(["If Redis goes down, what breaks?"])
    assert distributed.batches_sent == sent
    assert np.array_equal(one, embedder.embed(["If Redis goes down, what breaks?"]))


def test_an_ingest_with_ray_stores_the_same_chunk_vectors(backends, embedder, settings, sample_workspace, tmp_path):
    from workbench.embedding import text_hash
    from workbench.vectors.index import CHUNKS
    from workbench.workspace import Workspace

    _, distributed = backends.pair(Settings().embedding.backend, embedder)
    sent = distributed.batches_sent
    ws = Workspace(tmp_path / "ws", settings=settings, embedder=distributed)
    try:
        report = ws.ingest([SAMPLE])
        assert report.chunks_embedded > 100 and distributed.batches_sent > sent + CLUSTER_CPUS

        def vectors_by_text(workspace) -> dict[str, np.ndarray]:
            """Each chunk text's vector in Chroma (the one copy a workspace keeps)."""
            chunks = workspace.chunks()
            stored = workspace.vectors.get_vectors(CHUNKS, [c.id for c in chunks])
            assert len(stored) == len(chunks)
            return {text_hash(c.text): stored[c.id] for c in chunks}

        chroma_ray, chroma_here = vectors_by_text(ws), vectors_by_text(sample_workspace)
        assert len(chroma_ray) > 100 and chroma_ray.keys() == chroma_here.keys()
        assert all(np.array_equal(chroma_ray[h], chroma_here[h]) for h in chroma_here)
    finally:
        ws.close()
