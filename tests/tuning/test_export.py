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

PROMPT = "<|im_start|>user\nName three colours.<|im_end|>\n<|im_start|>assistant\n"


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


def _last_logits(llm: Any) -> Any:
    import numpy as np

    tokens = llm.tokenize(PROMPT.encode(), add_bos=False, special=True)
    llm.reset()
    llm.eval(tokens)
    return np.array(llm.scores[llm.n_tokens - 1])


@pytest.mark.llm
def test_llama_cpp_with_the_exported_adapter_agrees_with_peft(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    np = pytest.importorskip("numpy")
    torch = pytest.importorskip("torch")
    peft = pytest.importorskip("peft")
    llama_cpp = pytest.importorskip("llama_cpp")
    from cartagent.llm.packaged import packaged_model_path
    from cartagent.tuning.base_model import load_base_model

    base = load_base_model("smollm2")
    torch.manual_seed(0)
    lora = peft.LoraConfig(r=8, lora_alpha=16, target_modules="all-linear", init_lora_weights=False)
    model = peft.get_peft_model(base.model, lora)
    with torch.no_grad():
        for name, weight in model.named_parameters():
            if "lora_B" in name:
                weight.mul_(0.5)  # strong enough to change the answer, not to garble it
    model.save_pretrained(str(tmp_path / "adapter"))
    model.eval()
    with torch.no_grad():
        ids = base.tokenizer(PROMPT, return_tensors="pt")
        peft_logits = model(**ids).logits[0, -1].numpy()
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
