"""A GGUF base is dequantized once and kept: later loads read the kept folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from cartagent.tuning import base_model
from cartagent.tuning.base_model import load_base_config, load_base_model


@pytest.mark.model
def test_a_gguf_base_is_dequantized_once_and_then_read_from_the_kept_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")

    first = load_base_model("smollm2", cache_dir=tmp_path)
    (kept,) = [p for p in tmp_path.iterdir() if not p.name.startswith(".")]
    assert kept.name.startswith("SmolLM2-135M-Instruct.Q4_1-")
    assert (kept / "config.json").is_file() and (kept / "model.safetensors").is_file()

    read: list[tuple[str, str | None]] = []
    real = base_model._source

    def traced(base: str, cache_dir: Path | None) -> tuple[str, str | None, Path | None]:
        where, gguf, cached = real(base, cache_dir)
        read.append((where, gguf))
        return where, gguf, cached

    monkeypatch.setattr(base_model, "_source", traced)
    again = load_base_model("smollm2", cache_dir=tmp_path)
    config = load_base_config("smollm2", cache_dir=tmp_path)

    assert read == [(str(kept), None), (str(kept), None)]  # the GGUF is not read again
    weights, kept_weights = first.model.state_dict(), again.model.state_dict()
    assert weights.keys() == kept_weights.keys()
    assert all(torch.equal(weights[k], kept_weights[k]) for k in weights)
    chat = [{"role": "user", "content": "red running shoes under $40"}]
    assert first.tokenizer.apply_chat_template(
        chat, add_generation_prompt=True
    ) == again.tokenizer.apply_chat_template(chat, add_generation_prompt=True)
    assert again.tokenizer.pad_token_id == first.tokenizer.pad_token_id
    assert config["num_attention_heads"] == first.model.config.num_attention_heads


def test_a_base_kept_by_another_process_first_is_left_as_it_is(
    tiny_base: str, tmp_path: Path
) -> None:
    loaded = load_base_model(tiny_base)
    folder = tmp_path / "kept"

    base_model._keep(loaded.model, loaded.tokenizer, folder)
    saved = (folder / "model.safetensors").stat().st_mtime_ns
    base_model._keep(loaded.model, loaded.tokenizer, folder)  # a second worker, later

    assert (folder / "model.safetensors").stat().st_mtime_ns == saved
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept"]  # no partial copy left
    assert load_base_config(str(folder))["hidden_size"] == 32


def test_folders_and_names_are_not_kept(tiny_base: str, tmp_path: Path) -> None:
    load_base_model(tiny_base, cache_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_loading_a_base_draws_no_weight_loading_bar(
    tiny_base: str, capsys: pytest.CaptureFixture[str]
) -> None:
    logging = pytest.importorskip("transformers.utils.logging")
    previous = logging.set_tqdm_hook(None)  # as transformers starts, whatever ran before
    try:
        load_base_model(tiny_base)
    finally:
        logging.set_tqdm_hook(previous)
    assert "Loading weights" not in capsys.readouterr().err
