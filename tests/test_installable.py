"""Models a user installs: pinned parts joined into the cache and checked by SHA-256; a file that
fails its hash is refused in one line, by ``llm-serve`` and by the embedder alike."""

from __future__ import annotations

import hashlib

import pytest

from workbench.cli import main
from workbench.embedding import EmbeddingUnavailable, SentenceTransformerEmbedder
from workbench.embedding.installable import MODELS, ModelRefused, join_pieces, verified_file
from workbench.embedding.local_model import LocalModelError, model_file


@pytest.fixture
def empty_cache(tmp_path, monkeypatch):
    """A model cache of its own, so nothing the user installed is seen (or touched)."""
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "models"


def test_join_keeps_the_parts_in_order_when_the_hash_is_the_pinned_one(tmp_path):
    pieces = [tmp_path / f"part{i}.bin" for i in range(1, 4)]
    for i, piece in enumerate(pieces):
        piece.write_bytes(bytes([i]) * 1000)
    joined = b"".join(p.read_bytes() for p in pieces)
    target = join_pieces(pieces, tmp_path / "out" / "model.gguf", hashlib.sha256(joined).hexdigest())
    assert target.read_bytes() == joined


def test_join_refuses_parts_that_fail_the_hash_and_leaves_nothing(tmp_path):
    pieces = [tmp_path / "a.bin", tmp_path / "b.bin"]
    pieces[0].write_bytes(b"GGUF" + b"\0" * 100)
    pieces[1].write_bytes(b"tampered")
    with pytest.raises(ModelRefused, match="not the pinned"):
        join_pieces(pieces[::-1], tmp_path / "out" / "model.gguf", hashlib.sha256(b"anything else").hexdigest())
    assert list((tmp_path / "out").iterdir()) == []  # no model, no temporary file


def test_a_chat_model_not_installed_says_how_to_install_it(empty_cache):
    with pytest.raises(LocalModelError, match=r"not installed .* run `python -m workbench models install qwen2.5"):
        model_file("qwen2.5-coder-1.5b")


def test_llm_serve_refuses_a_corrupted_model_in_one_line(empty_cache, capsys):
    empty_cache.mkdir(parents=True)
    corrupted = empty_cache / MODELS["qwen2.5-coder-1.5b"].file_name
    corrupted.write_bytes(b"GGUF" + b"\x00" * 4096)  # the right name, not the pinned bytes
    code = main(["llm-serve", "--model", "qwen2.5-coder-1.5b", "--port", "1"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "refused" in err and MODELS["qwen2.5-coder-1.5b"].sha256 in err and "models install" in err


def test_llm_serve_names_the_models_it_knows(capsys):
    code = main(["llm-serve", "--model", "gpt-9"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "unknown chat model 'gpt-9'" in err and "smollm2-135m" in err and "qwen2.5-coder-1.5b" in err


def test_an_embedder_whose_weights_fail_the_hash_is_refused(empty_cache):
    folder = empty_cache / "all-mpnet-base-v2"
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"not the weights")
    embedder = SentenceTransformerEmbedder("all-mpnet-base-v2")
    assert embedder.name == "all-mpnet-base-v2" and embedder.dimension == 768
    with pytest.raises(EmbeddingUnavailable, match="refused: .* has sha256"):
        embedder.embed(["Redis is the cache behind the token service."])


def test_the_installed_models_pass_their_hashes():
    """What .ci/run installs with `models install`: the SmolLM2 wheel, Qwen's 22 parts, mpnet's zip."""
    assert model_file("smollm2-135m").stat().st_size == MODELS["smollm2-135m"].size
    assert model_file("qwen2.5-coder-1.5b").stat().st_size == MODELS["qwen2.5-coder-1.5b"].size
    assert (verified_file("all-mpnet-base-v2") / "modules.json").is_file()


def test_the_installed_mpnet_embeds_like_a_sentence_model():
    embedder = SentenceTransformerEmbedder("all-mpnet-base-v2")
    vectors = embedder.embed(["Redis keeps the login tokens.", "Where are login tokens stored?", "A poem about spring."])
    assert vectors.shape == (3, 768) and abs(float(vectors[0] @ vectors[0]) - 1.0) < 1e-4
    assert float(vectors[1] @ vectors[0]) > float(vectors[1] @ vectors[2]) + 0.2
