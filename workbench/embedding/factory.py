"""The embedder the settings name: :func:`embedder_from_settings`."""

from __future__ import annotations

import functools

from .base import STATIC_PREFIX, Embedder
from .torch_backend import SentenceTransformerEmbedder, installable_embedder

__all__ = ["embedder_from_settings", "in_process_embedder"]


def embedder_from_settings(settings) -> Embedder:
    """The embedder named by ``settings.embedding`` (loaded lazily, on first use): the
    sentence-transformer run by ``embedding.backend`` (torch, or an export of it:
    :mod:`workbench.embedding.exported`), or with ``static`` / ``static:<dimension>`` the static
    embedder distilled from MiniLM (:mod:`workbench.embedding.static`); with
    ``embedding.distributed: ray`` that embedder run by Ray actors
    (:mod:`workbench.embedding.distributed`), under the same name since its vectors are the same.

    >>> from workbench.settings import Settings
    >>> settings = Settings()
    >>> settings.embedding.backend = "torch"
    >>> embedder_from_settings(settings).name
    'all-MiniLM-L6-v2'
    >>> settings.embedding.model = "static:128"
    >>> embedder_from_settings(settings).name
    'static-minilm-128-v2'
    """
    embedding = settings.embedding
    if embedding.distributed == "ray":
        from .distributed import RayEmbedder

        return RayEmbedder(functools.partial(in_process_embedder, embedding.model_copy(update={"distributed": "none"})),
                           actors=embedding.ray_actors, address=embedding.ray_address,
                           cpus_per_actor=embedding.ray_cpus_per_actor)
    return in_process_embedder(embedding)


def in_process_embedder(embedding) -> Embedder:
    """The embedder of the ``embedding`` settings section run in this process (its
    ``distributed`` setting aside): what :func:`embedder_from_settings` gives, or each Ray actor
    holds with ``embedding.distributed: ray``."""
    model = embedding.model
    kind, _, dimension = model.partition(":")
    if kind != STATIC_PREFIX:
        # An installed embedder is not exported (all-mpnet-base-v2 takes no token type ids): torch runs it.
        if embedding.backend == "torch" or installable_embedder(model) is not None:
            return SentenceTransformerEmbedder(model, embedding.batch_size)
        from .exported import ExportedEmbedder

        return ExportedEmbedder(embedding.backend, model, embedding.batch_tokens)
    from ..settings import SettingsError
    from .static import DEFAULT_DIMENSION, StaticEmbedder

    if dimension and not (dimension.isdigit() and 1 <= int(dimension) <= SentenceTransformerEmbedder.dimension):
        raise SettingsError(f"embedding.model: {model!r}: the static embedder's dimension is a whole number from 1 "
                            f"to {SentenceTransformerEmbedder.dimension}, e.g. 'static:256'")
    return StaticEmbedder(dimension=int(dimension) if dimension else DEFAULT_DIMENSION)
