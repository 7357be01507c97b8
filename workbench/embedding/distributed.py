"""The embedding of large calls handed to Ray actors (``embedding.distributed: ray``).

An ingest's dominant cost is embedding its chunks. :class:`RayEmbedder` is an
:class:`~workbench.embedding.Embedder` that runs ``embedding.ray_actors`` Ray actors, each
holding one in-process embedder of the configured backend, and shares a call's forward passes
among them. Ray schedules, moves the data and restarts nothing: no distributed code is written
here beyond sending each batch to an actor and putting the vectors back in input order.

The vectors are the in-process embedder's, bit for bit: the driver asks that embedder which
forward passes it would make of the texts (its ``batches``: the exported backends group texts by
token length, torch by length in characters) and sends each pass's texts, in its order, to an
actor, whose embedder then makes that same pass. The exported backends' passes also combine (a run
of consecutive passes, embedded together, makes those passes again), so they go in runs, and an
actor of several CPUs keeps them all busy (OpenVINO runs a run's passes on one stream per core);
torch's go one per call. So :attr:`RayEmbedder.name` is the wrapped
embedder's: the same vector space, cache entries and Chroma collections. An actor whose embedder
names another space (an exported backend on a CPU of another kind, say bf16 against fp32) is
refused. A call of one forward pass (a query, a handful of names) gains nothing from Ray and
runs in this process; the cluster is started by the first larger call.

Ray is an optional extra (``pip install 'context-graph-workbench[ray]'``), imported on first use.
Its usage stats are switched off (``RAY_USAGE_STATS_ENABLED=0``, read when a cluster starts) and
the dashboard is not started: nothing is sent anywhere.

Example (it starts a Ray cluster and loads the model, so it is shown rather than run)::

    from workbench.settings import Settings
    settings = Settings()
    settings.embedding.distributed = "ray"
    embedder = embedder_from_settings(settings)     # a RayEmbedder, named like the in-process one
    vectors = embedder.embed(chunk_texts)           # shape (len(chunk_texts), 384)
    embedder.close()
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Sequence

import numpy as np

from ..settings import setting_default
from .base import Embedder, EmbeddingUnavailable

__all__ = ["RayEmbedder", "STARTUP_TIMEOUT_SECONDS", "connect_ray", "ray_module"]

#: Longest wait for the actors to load their models (a first use exports the model).
STARTUP_TIMEOUT_SECONDS = 600.0
#: The switch Ray reads when a cluster starts; "0" means no usage report is collected or sent.
USAGE_STATS_SWITCH = {"RAY_USAGE_STATS_ENABLED": "0"}
#: Runs of passes a call is cut into per actor: enough for the actors to finish together, few
#: enough that each run fills an actor's cores.
RUNS_PER_ACTOR = 4


def ray_module():
    """``import ray``, or a :class:`~workbench.settings.SettingsError` naming the setting that needs it."""
    try:
        import ray
    except ImportError as exc:
        from ..settings import SettingsError

        raise SettingsError("embedding.distributed: 'ray' needs the ray package, which is not installed: "
                            "pip install 'context-graph-workbench[ray]' (or ray==2.60.0), or set "
                            f"embedding.distributed: none ({exc})") from None
    return ray


def connect_ray(address: str | None, cpus: int) -> bool:
    """Connect this process to Ray: a local cluster of ``cpus`` CPUs when ``address`` is None,
    else the cluster at ``address`` (``"auto"``, ``"host:port"``, ``"ray://host:10001"``). A
    process already connected stays as it is. True when this call started a cluster.

    Raises
    ------
    EmbeddingUnavailable
        No cluster answers at ``address``.
    """
    ray = ray_module()
    if ray.is_initialized():
        return False
    os.environ.update(USAGE_STATS_SWITCH)  # before the cluster's processes start: they inherit it
    import logging

    try:
        if address is None:
            # "local": a new cluster even where RAY_ADDRESS or a `ray start` cluster would be joined
            ray.init(address="local", num_cpus=cpus, include_dashboard=False, log_to_driver=False,
                     logging_level=logging.WARNING)
        else:
            ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = "a local Ray cluster" if address is None else f"the Ray cluster at {address!r}"
        raise EmbeddingUnavailable(f"embedding.ray_address: cannot connect to {where}: {exc}") from exc
    return address is None


class _EmbeddingActor:
    """One Ray actor: one in-process embedder, made on the actor's node."""

    def __init__(self, make_embedder: Callable[[], Embedder]):
        self.embedder = make_embedder()

    def describe(self) -> tuple[str, int, str]:
        """(embedder name, dimension, node) once the model is loaded (a one-text call loads it)."""
        self.embedder.embed(["load"])
        import socket

        return self.embedder.name, int(self.embedder.dimension), socket.gethostname()

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.embedder.embed(texts)


class RayEmbedder:
    """An embedder run by ``actors`` Ray actors, each holding the embedder ``make_embedder``
    makes; vectors identical to that embedder's in this process.

    Parameters
    ----------
    make_embedder : a picklable function returning the in-process embedder (called here once,
        for the name, the batch plan and one-pass calls, and once in every actor); it must
        return an embedder with ``batches(texts)``, the rows of each forward pass it makes
    actors : Ray actors
    address : None starts a local cluster of ``actors x cpus_per_actor`` CPUs on first use; else
        the cluster to join (see :func:`connect_ray`)
    cpus_per_actor : CPUs Ray reserves for each actor (a node's cores: one actor per node)

    Attributes
    ----------
    batches_sent : forward passes sent to the actors so far
    calls_sent : calls made of the actors so far (each a run of consecutive passes)
    nodes : the host name of each actor, once started
    """

    def __init__(self, make_embedder: Callable[[], Embedder], actors: int = setting_default("embedding.ray_actors"),
                 address: str | None = None, cpus_per_actor: int = setting_default("embedding.ray_cpus_per_actor")):
        if actors < 1 or cpus_per_actor < 1:
            raise ValueError(f"actors and cpus_per_actor must be at least 1, got {actors} and {cpus_per_actor}")
        ray_module()  # a missing extra is said now, not at the first ingest
        self.make_embedder = make_embedder
        self.local = make_embedder()
        if not callable(getattr(self.local, "batches", None)):
            from ..settings import SettingsError

            raise SettingsError(f"embedding.distributed: 'ray' runs the transformer backends; {self.local.name} "
                                "cannot say its forward passes (the static embedder is fast in process): set "
                                "embedding.distributed: none")
        self.name = self.local.name
        self.dimension = self.local.dimension
        self.actors = actors
        self.address = address
        self.cpus_per_actor = cpus_per_actor
        self.batches_sent = 0
        self.calls_sent = 0
        self.nodes: list[str] = []
        self._handles: list[Any] = []
        self._started_cluster = False
        self._lock = threading.Lock()

    def __getattr__(self, name):  # represents(), when the wrapped embedder can tell
        if name.startswith("_") or name == "local":
            raise AttributeError(name)
        return getattr(self.local, name)

    def _start(self) -> list[Any]:
        with self._lock:
            if self._handles:
                return self._handles
            ray = ray_module()
            wanted = self.actors * self.cpus_per_actor
            self._started_cluster = connect_ray(self.address, wanted) or self._started_cluster
            cpus = ray.cluster_resources().get("CPU", 0)
            if cpus < wanted:
                raise EmbeddingUnavailable(f"embedding.ray_actors: {self.actors} actors of {self.cpus_per_actor} CPU(s) "
                                           f"each wanted, the Ray cluster has {cpus:g} CPUs: lower embedding.ray_actors "
                                           "or embedding.ray_cpus_per_actor")
            actor = ray.remote(num_cpus=self.cpus_per_actor)(_EmbeddingActor)
            handles = [actor.remote(self.make_embedder) for _ in range(self.actors)]
            try:
                described = ray.get([h.describe.remote() for h in handles], timeout=STARTUP_TIMEOUT_SECONDS)
            except Exception as exc:
                for handle in handles:
                    ray.kill(handle)
                raise EmbeddingUnavailable(f"embedding.distributed: the Ray actors could not load {self.name}: "
                                           f"{exc}") from exc
            others = [(name, node) for name, _, node in described if name != self.name]
            if others:
                for handle in handles:
                    ray.kill(handle)
                raise EmbeddingUnavailable(
                    f"embedding.distributed: an actor on {others[0][1]} embeds as {others[0][0]}, this process as "
                    f"{self.name}: their vectors differ, so they cannot share a vector space. Run the actors on "
                    "nodes with this machine's kind of CPU, or set embedding.distributed: none")
            self.dimension = described[0][1]
            self.nodes = [node for _, _, node in described]
            self._handles = handles
            return handles

    def runs(self, passes: Sequence[np.ndarray]) -> list[np.ndarray]:
        """The rows of each call to an actor: ``passes`` cut into about ``RUNS_PER_ACTOR`` runs of
        consecutive passes per actor when the wrapped embedder's passes combine (its
        ``passes_combine``: a run's texts, embedded together, make the run's passes again), else
        one pass per call (torch: ``encode`` sorts a call's texts again, ties in any order)."""
        if not getattr(self.local, "passes_combine", False):
            return list(passes)
        cuts = np.array_split(np.arange(len(passes)), min(len(passes), self.actors * RUNS_PER_ACTOR))
        return [np.concatenate([passes[i] for i in cut]) for cut in cuts]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        passes = self.local.batches(texts)  # type: ignore[attr-defined]
        if len(passes) == 1:  # nothing to share: the same pass, here
            return self.local.embed(texts)
        handles = self._start()
        ray = ray_module()
        runs = self.runs(passes)
        # Round robin: Ray queues each actor's runs, so none waits on a round trip to this process.
        pending = [handles[i % len(handles)].embed.remote([texts[j] for j in rows]) for i, rows in enumerate(runs)]
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for rows, vectors in zip(runs, ray.get(pending)):
            out[rows] = vectors
        self.batches_sent += len(passes)
        self.calls_sent += len(runs)
        return out

    def close(self) -> None:
        """Stop the actors, and the local cluster if this embedder started it."""
        with self._lock:
            if not self._handles and not self._started_cluster:
                return
            ray = ray_module()
            for handle in self._handles:
                ray.kill(handle)
            self._handles = []
            if self._started_cluster:
                ray.shutdown()
                self._started_cluster = False
