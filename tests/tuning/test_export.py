"""A PEFT adapter exported as a GGUF LoRA changes llama.cpp's output the way it changes PEFT's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cartagent.errors import ConfigurationError
from cartagent.retrieval.query import SearchQuery
from cartagent.tuning import export
from cartagent.tuning.dpo import gguf_answerer
from cartagent.tuning.export import export_gguf_lora, gguf_tensor_name
from cartagent.tuning.training_data import Example
from tests.cache import CACHE, ENABLED

PROMPT = "<|im_start|>user\nName three colours.<|im_end|>\n<|im_start|>assistant\n"


def _dequantized_in(tmp_path: Path) -> Path:
    """Where a GGUF base's dequantized copy is kept: the test cache (keyed by the GGUF's hash),
    so only the first run pays the GGUF reading; the run's folder when the cache is off."""
    return CACHE / "base-models" if ENABLED else tmp_path


def test_peft_keys_map_to_llama_cpp_tensor_names() -> None:
    key = "base_model.model.model.layers.12.self_attn.q_proj.lora_A.weight"
    assert gguf_tensor_name(key) == ("blk.12.attn_q.weight", "a")
    key = "base_model.model.model.layers.0.mlp.down_proj.lora_B.weight"
    assert gguf_tensor_name(key) == ("blk.0.ffn_down.weight", "b")
    with pytest.raises(ConfigurationError, match=r"no llama\.cpp counterpart"):
        gguf_tensor_name("base_model.model.lm_head.lora_A.weight")


def test_a_folder_that_is_not_an_adapter_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="not a PEFT LoRA adapter folder"):
        export_gguf_lora(tmp_path, {"num_attention_heads": 9}, tmp_path / "a.gguf")
    (tmp_path / "adapter_config.json").write_text("{}")
    (tmp_path / "adapter_model.safetensors").write_bytes(b"garbage")
    with pytest.raises(ConfigurationError, match="unreadable adapter"):
        export_gguf_lora(tmp_path, {"num_attention_heads": 9}, tmp_path / "a.gguf")


def _tiny_adapter(folder: Path) -> Any:
    """A PEFT folder with one layer's query and value projections: 4 heads of 4 rows, rank 2."""
    np = pytest.importorskip("numpy")
    from safetensors.numpy import save_file

    folder.mkdir()
    (folder / "adapter_config.json").write_text(json.dumps({"lora_alpha": 4, "r": 2}))
    prefix = "base_model.model.model.layers.0.self_attn"
    b = np.arange(32, dtype=np.float32).reshape(16, 2)
    save_file(
        {
            f"{prefix}.q_proj.lora_A.weight": np.ones((2, 8), dtype=np.float32),
            f"{prefix}.q_proj.lora_B.weight": b,
            f"{prefix}.v_proj.lora_B.weight": b,
        },
        str(folder / "adapter_model.safetensors"),
    )
    return b


@pytest.mark.parametrize(
    ("model_type", "architecture", "permuted"),
    [("llama", "llama", True), ("qwen2", "qwen2", False)],
)
def test_the_adapter_names_its_base_architecture_and_keeps_its_row_order(
    tmp_path: Path, model_type: str, architecture: str, permuted: bool
) -> None:
    gguf = pytest.importorskip("gguf")
    np = pytest.importorskip("numpy")
    b = _tiny_adapter(tmp_path / "adapter")
    config = {"model_type": model_type, "num_attention_heads": 4}
    reader = gguf.GGUFReader(export_gguf_lora(tmp_path / "adapter", config, tmp_path / "a.gguf"))
    arch = reader.get_field(gguf.Keys.General.ARCHITECTURE)
    assert arch is not None and arch.contents() == architecture
    tensors = {t.name: np.array(t.data, dtype=np.float32).reshape(16, 2) for t in reader.tensors
               if t.name.endswith("lora_b")}  # fmt: skip
    query, value = tensors["blk.0.attn_q.weight.lora_b"], tensors["blk.0.attn_v.weight.lora_b"]
    assert np.array_equal(value, b)  # never permuted
    assert np.array_equal(query, export._permute_rows(b, 4) if permuted else b)
    assert not np.array_equal(export._permute_rows(b, 4), b)


def test_a_base_of_an_unknown_architecture_is_refused(tmp_path: Path) -> None:
    _tiny_adapter(tmp_path / "adapter")
    config = {"model_type": "mamba", "num_attention_heads": 4}
    with pytest.raises(ConfigurationError, match=r"model type 'mamba' is not exported \(known: "):
        export_gguf_lora(tmp_path / "adapter", config, tmp_path / "a.gguf")
    assert not (tmp_path / "a.gguf").exists()


def _last_logits(llm: Any) -> Any:
    import numpy as np

    tokens = llm.tokenize(PROMPT.encode(), add_bos=False, special=True)
    llm.reset()
    llm.eval(tokens)
    return np.array(llm.scores[llm.n_tokens - 1])


def _random_adapter(base: Any, folder: Path, scale: float) -> Any:
    """A seeded random rank-8 LoRA on every linear layer of ``base`` (its ``lora_B`` scaled by
    ``scale``), saved in ``folder``; returns PEFT's logits for the next token after ``PROMPT``."""
    import peft
    import torch

    torch.manual_seed(0)
    lora = peft.LoraConfig(r=8, lora_alpha=16, target_modules="all-linear", init_lora_weights=False)
    model = peft.get_peft_model(base.model, lora)
    with torch.no_grad():
        for name, weight in model.named_parameters():
            if "lora_B" in name:
                weight.mul_(scale)
    model.save_pretrained(str(folder))
    model.eval()
    with torch.no_grad():
        return model(**base.tokenizer(PROMPT, return_tensors="pt")).logits[0, -1].numpy()


@pytest.mark.llm
def test_llama_cpp_with_the_exported_adapter_agrees_with_peft(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    np = pytest.importorskip("numpy")
    pytest.importorskip("torch")
    pytest.importorskip("peft")
    llama_cpp = pytest.importorskip("llama_cpp")
    from cartagent.llm.packaged import packaged_model_path
    from cartagent.tuning.base_model import load_base_model

    base = load_base_model("smollm2", cache_dir=_dequantized_in(tmp_path))
    # strong enough to change the answer, not to garble it
    peft_logits = _random_adapter(base, tmp_path / "adapter", 0.5)
    config = base.model.config.to_dict()
    exported = export_gguf_lora(tmp_path / "adapter", config, tmp_path / "adapter.gguf")
    monkeypatch.setattr(export, "_permute_rows", lambda weight, heads: weight)
    unpermuted = export_gguf_lora(tmp_path / "adapter", config, tmp_path / "unpermuted.gguf")

    def logits(adapter: Path | None) -> Any:
        llm = llama_cpp.Llama(
            model_path=str(packaged_model_path("smollm2")),
            lora_path=None if adapter is None else str(adapter),
            n_ctx=256,
            logits_all=True,
            verbose=False,
        )
        return _last_logits(llm)

    def distance(a: Any) -> float:
        return float(np.abs(a - peft_logits).mean())

    with_adapter, without, wrong_rows = logits(exported), logits(None), logits(unpermuted)

    # The base GGUF is 4-bit, PEFT ran on its dequantized weights: close, not equal.
    assert distance(with_adapter) < 0.5 * distance(without)
    assert distance(with_adapter) < 0.5 * distance(wrong_rows)
    assert int(np.argmax(with_adapter)) == int(np.argmax(peft_logits))
    adapter_config = json.loads((tmp_path / "adapter" / "adapter_config.json").read_text())
    assert adapter_config["r"] == 8

    # DPO asks the SFT model this way: llama.cpp, the GGUF LoRA, grammar-constrained JSON (a
    # random adapter may ramble to the token limit, so only the start is certain).
    monkeypatch.undo()
    answer = gguf_answerer(tmp_path / "adapter", "smollm2")(Example("red shoes", (), SearchQuery()))
    assert answer.startswith("{")
    # Served merged, with the merged file beside the adapter folder (which MLflow logs and the
    # registry copies), not in it.
    assert not list((tmp_path / "adapter").glob("*+*.gguf"))
    assert len(list((tmp_path / "merged").glob("*.gguf"))) == 1


@pytest.mark.llm
@pytest.mark.slow
def test_an_adapter_on_a_qwen2_base_moves_llama_cpp_as_it_moves_peft(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Qwen2 keeps Hugging Face's query/key row order: the exported adapter, as is, changes
    llama.cpp's logits the way PEFT's change; with a Llama's rows permuted, it does not."""
    np = pytest.importorskip("numpy")
    pytest.importorskip("torch")
    pytest.importorskip("peft")
    llama_cpp = pytest.importorskip("llama_cpp")
    from cartagent.llm.qwen import qwen_model_path
    from cartagent.settings import Settings
    from cartagent.tuning.base_model import load_base_model

    models = Settings.from_env().data_dir / "models"
    try:
        gguf = qwen_model_path("qwen2.5-coder-0.5b", cache_dir=models)
    except ConfigurationError:
        pytest.skip("the qwen extra is not installed")
    base = load_base_model(str(gguf), cache_dir=_dequantized_in(tmp_path))
    # a clear change, not one that garbles the answer
    peft_logits = _random_adapter(base, tmp_path / "adapter", 0.1)
    config = base.model.config.to_dict()
    assert config["model_type"] == "qwen2"
    exported = export_gguf_lora(tmp_path / "adapter", config, tmp_path / "adapter.gguf")
    monkeypatch.setitem(export.ARCHITECTURES, "qwen2", ("qwen2", True))
    permuted = export_gguf_lora(tmp_path / "adapter", config, tmp_path / "permuted.gguf")

    def distance(adapter: Path | None) -> float:
        llm = llama_cpp.Llama(
            model_path=str(gguf),
            lora_path=None if adapter is None else str(adapter),
            n_ctx=256,
            logits_all=True,
            verbose=False,
        )
        return float(np.abs(_last_logits(llm) - peft_logits).mean())

    off = distance(exported)
    assert off < 0.1 * distance(None)
    assert off < 0.5 * distance(permuted)
