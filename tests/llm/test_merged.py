"""A GGUF LoRA folded into its base: the same function, one file, cached by content."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cartagent.errors import ConfigurationError
from cartagent.files import file_sha256
from cartagent.llm import merged
from cartagent.llm.merged import STORED_AS, merge_lora, merged_model_path

gguf = pytest.importorskip("gguf")
np = pytest.importorskip("numpy")

ROWS, COLS, RANK, ALPHA = 8, 64, 2, 8.0


def _base(path: Path, weight: Any) -> Path:
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_string("general.name", "tiny")
    writer.add_array("tokenizer.ggml.tokens", ["a", "b", "c"])
    writer.add_uint32("llama.block_count", 1)
    writer.add_tensor(
        "blk.0.attn_q.weight",
        gguf.quants.quantize(weight, gguf.GGMLQuantizationType.Q8_0),
        raw_dtype=gguf.GGMLQuantizationType.Q8_0,
    )
    writer.add_tensor("token_embd.weight", np.arange(3 * COLS, dtype=np.float32).reshape(3, COLS))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def _adapter(path: Path, a: Any, b: Any, name: str = "blk.0.attn_q.weight") -> Path:
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_string(gguf.Keys.General.TYPE, gguf.GGUFType.ADAPTER)
    writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
    writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, ALPHA)
    writer.add_tensor(f"{name}.lora_a", a.astype(np.float16))
    writer.add_tensor(f"{name}.lora_b", b.astype(np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path, Any, Any]:
    rng = np.random.default_rng(0)
    weight = rng.normal(0, 0.05, (ROWS, COLS)).astype(np.float32)
    a = rng.normal(0, 0.5, (RANK, COLS)).astype(np.float32)
    b = rng.normal(0, 0.5, (ROWS, RANK)).astype(np.float32)
    base = _base(tmp_path / "base.gguf", weight)
    adapter = _adapter(tmp_path / "adapter.gguf", a, b)
    quantized = gguf.quants.dequantize(
        gguf.quants.quantize(weight, gguf.GGMLQuantizationType.Q8_0),
        gguf.GGMLQuantizationType.Q8_0,
    )  # as the base stores it
    a16, b16 = a.astype(np.float16).astype(np.float32), b.astype(np.float16).astype(np.float32)
    return base, adapter, quantized, quantized + (ALPHA / RANK) * (b16 @ a16)


def test_the_adapted_weight_changes_and_everything_but_the_embeddings_is_copied(
    pair: tuple[Path, Path, Any, Any], tmp_path: Path
) -> None:
    base, adapter, before, expected = pair
    out = merge_lora(base, adapter, tmp_path / "out" / "merged.gguf")

    reader = gguf.GGUFReader(str(out))
    tensors = {t.name: t for t in reader.tensors}
    q = tensors["blk.0.attn_q.weight"]
    assert q.tensor_type == gguf.GGMLQuantizationType.Q4_0 == gguf.GGMLQuantizationType[STORED_AS]
    got = gguf.quants.dequantize(q.data, q.tensor_type)
    # A Q4_0 block scales its largest value to -8: a rounding step is at most max / 8 and a value
    # is off by half a step at most.
    step = float(np.abs(expected).max()) / 8
    assert np.abs(got - expected).max() <= step / 2
    assert np.abs(got - before).max() > 4 * step  # the adapter really changed it
    # The embeddings (the output head of a tied model) are stored as Q4_0 too.
    embedding = tensors["token_embd.weight"]
    assert embedding.tensor_type == gguf.GGMLQuantizationType.Q4_0
    written = np.arange(3 * COLS, dtype=np.float32).reshape(3, COLS)
    got = gguf.quants.dequantize(embedding.data, embedding.tensor_type)
    assert np.abs(got - written).max() <= float(written.max()) / 16
    assert reader.get_field("general.name").contents() == "tiny"
    assert reader.get_field("tokenizer.ggml.tokens").contents() == ["a", "b", "c"]
    assert reader.get_field("general.architecture").contents() == "llama"
    assert [p.name for p in out.parent.iterdir()] == ["merged.gguf"]  # no partial file left


def test_the_adapted_weight_may_be_kept_as_q8_0_and_no_other_unlisted_type(
    pair: tuple[Path, Path, Any, Any], tmp_path: Path
) -> None:
    base, adapter, _, expected = pair
    out = merge_lora(base, adapter, tmp_path / "q8.gguf", stored_as="Q8_0")
    (q,) = [t for t in gguf.GGUFReader(str(out)).tensors if t.name == "blk.0.attn_q.weight"]
    assert q.tensor_type == gguf.GGMLQuantizationType.Q8_0
    got = gguf.quants.dequantize(q.data, q.tensor_type)
    assert np.abs(got - expected).max() <= float(np.abs(expected).max()) / 127
    (embedding,) = [t for t in gguf.GGUFReader(str(out)).tensors if t.name == "token_embd.weight"]
    written = np.arange(3 * COLS, dtype=np.float32).reshape(3, COLS)
    assert np.array_equal(np.asarray(embedding.data), written)  # copied as it was
    assert merged_model_path(base, adapter, tmp_path, stored_as="Q8_0").name.endswith(".Q8_0.gguf")
    for bad in ("Q4_1", "f16", "../x"):
        with pytest.raises(ConfigurationError, match="stored as one of Q4_0, Q8_0"):
            merged_model_path(base, adapter, tmp_path, stored_as=bad)


def test_it_is_built_once_per_base_and_adapter(
    pair: tuple[Path, Path, Any, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, adapter, *_ = pair
    builds: list[Path] = []
    real = merged.merge_lora

    def counting(base: Path, adapter: Path, out: Path, *, stored_as: str) -> Path:
        builds.append(out)
        return real(base, adapter, out, stored_as=stored_as)

    monkeypatch.setattr(merged, "merge_lora", counting)
    cache = tmp_path / "cache"
    first = merged_model_path(base, adapter, cache)
    assert merged_model_path(base, adapter, cache) == first
    assert len(builds) == 1
    kept_finer = merged_model_path(base, adapter, cache, stored_as="Q8_0")
    assert kept_finer != first and len(builds) == 2  # another type is another file

    rng = np.random.default_rng(1)
    _adapter(adapter, rng.normal(size=(RANK, COLS)), rng.normal(size=(ROWS, RANK)))
    second = merged_model_path(base, adapter, cache)
    assert second != first and len(builds) == 3


def _merged_with_hash(base: Path, adapter: Path, cache: Path) -> tuple[Path, Path]:
    """The merge of ``adapter`` on ``base`` in ``cache``, and the file its hash is kept in."""
    merged_file = merged_model_path(base, adapter, cache)
    return merged_file, merged_file.with_name(merged_file.name + ".sha256")


def test_a_merge_changed_since_it_was_made_is_refused_with_both_hashes(
    pair: tuple[Path, Path, Any, Any], tmp_path: Path
) -> None:
    base, adapter, *_ = pair
    cache = tmp_path / "cache"
    merged_file, recorded = _merged_with_hash(base, adapter, cache)
    good = file_sha256(merged_file)
    assert recorded.read_text() == good + "\n"
    data = bytearray(merged_file.read_bytes())
    data[-1] ^= 0xFF  # one flipped bit in the last tensor
    merged_file.write_bytes(bytes(data))
    with pytest.raises(ConfigurationError) as refused:
        merged_model_path(base, adapter, cache)
    assert f"SHA-256 is {file_sha256(merged_file)}, not {good}" in str(refused.value)
    assert "delete it (and its .sha256) to merge again" in str(refused.value)
    merged_file.unlink()
    recorded.unlink()
    assert file_sha256(merged_model_path(base, adapter, cache)) == good


def test_a_merge_kept_before_hashes_were_recorded_is_trusted_once_then_checked(
    pair: tuple[Path, Path, Any, Any], tmp_path: Path
) -> None:
    base, adapter, *_ = pair
    cache = tmp_path / "cache"
    merged_file, recorded = _merged_with_hash(base, adapter, cache)
    recorded.unlink()
    assert merged_model_path(base, adapter, cache) == merged_file
    assert recorded.read_text() == file_sha256(merged_file) + "\n"


def test_an_adapter_for_another_model_is_refused(
    pair: tuple[Path, Path, Any, Any], tmp_path: Path
) -> None:
    base, _, *_ = pair
    wrong_shape = _adapter(tmp_path / "wide.gguf", np.ones((RANK, COLS * 2)), np.ones((ROWS, RANK)))
    with pytest.raises(ConfigurationError, match="does not fit the base weight"):
        merge_lora(base, wrong_shape, tmp_path / "m.gguf")
    missing = _adapter(
        tmp_path / "other.gguf", np.ones((RANK, COLS)), np.ones((ROWS, RANK)), "blk.7.ffn_up.weight"
    )
    with pytest.raises(ConfigurationError, match=r"adapts blk\.7\.ffn_up\.weight"):
        merge_lora(base, missing, tmp_path / "m.gguf")
    assert not (tmp_path / "m.gguf").exists()


def test_files_that_are_not_an_adapter_are_refused(
    pair: tuple[Path, Path, Any, Any], tmp_path: Path
) -> None:
    base, *_ = pair
    with pytest.raises(ConfigurationError, match="not a GGUF LoRA adapter"):
        merge_lora(base, base, tmp_path / "m.gguf")
    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(b"not a gguf at all")
    with pytest.raises(ConfigurationError, match="not a readable GGUF file"):
        merge_lora(base, garbage, tmp_path / "m.gguf")
    with pytest.raises(ConfigurationError, match="no such model file"):
        merged_model_path(base, tmp_path / "absent.gguf", tmp_path)


@pytest.mark.llm
def test_the_merged_shipped_adapter_computes_what_the_runtime_lora_computes(
    tmp_path: Path,
) -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    from cartagent.llm.adapters import shipped_adapter
    from cartagent.llm.packaged import packaged_model_path

    base = packaged_model_path("smollm2")
    adapter = shipped_adapter("search-smollm2").path
    from cartagent.retrieval.prompt import understanding_messages

    # The prompt the adapter was trained on (its card's style).
    system, user = understanding_messages("red running shoes under $60, comfy", style="gaps")
    prompt = (
        f"<|im_start|>system\n{system.content}<|im_end|>\n"
        f"<|im_start|>user\n{user.content}<|im_end|>\n<|im_start|>assistant\n"
    )

    def logits(model: Path, lora: Path | None = None) -> Any:
        llm = llama_cpp.Llama(
            model_path=str(model),
            lora_path=None if lora is None else str(lora),
            n_ctx=256,
            logits_all=True,
            verbose=False,
        )
        tokens = llm.tokenize(prompt.encode(), add_bos=False, special=True)
        llm.eval(tokens)
        return np.array(llm.scores[llm.n_tokens - 1])

    runtime = logits(base, adapter)
    plain = logits(base)
    change = np.abs(plain - runtime).mean()  # what the adapter changes
    q8 = logits(merged_model_path(base, adapter, tmp_path, stored_as="Q8_0"))
    q4 = logits(merged_model_path(base, adapter, tmp_path, stored_as="Q4_0"))
    # Q8_0 rounding keeps the folded model close to the runtime LoRA; Q4_0 rounds off a fifth to
    # a half of the adapter's change (its answers are right as often: docs/tuning/results.md),
    # and both choose the runtime LoRA's token.
    assert np.abs(q8 - runtime).mean() < 0.25 * change
    assert np.abs(q4 - runtime).mean() < 0.75 * change
    assert int(np.argmax(q8)) == int(np.argmax(q4)) == int(np.argmax(runtime))


@pytest.mark.llm
def test_a_corrupt_adapter_makes_the_rules_answer_with_the_reason(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    from cartagent.llm.llama_cpp import LlamaCppModel
    from cartagent.llm.packaged import packaged_model_path
    from cartagent.retrieval.rules import parse
    from cartagent.retrieval.understanding import ModelUnderstander

    corrupt = tmp_path / "adapter.gguf"
    corrupt.write_bytes(b"GGUF" + b"\0" * 64)
    model = LlamaCppModel(
        packaged_model_path("smollm2"), lora_path=corrupt, merge_cache=tmp_path / "cache"
    )
    with ModelUnderstander(model, style="guided") as understander:
        outcome = understander.understand_sync("red mug under $20")

    assert outcome.source == "rules" and outcome.query == parse("red mug under $20")
    assert any("not a readable GGUF file" in p for p in outcome.problems), outcome.problems


def test_merging_needs_an_adapter() -> None:
    from cartagent.llm.llama_cpp import LlamaCppModel
    from cartagent.llm.packaged import packaged_model_path

    with pytest.raises(ConfigurationError, match="merge_cache needs a lora_path"):
        LlamaCppModel(packaged_model_path("smollm2"), merge_cache="/tmp")
    with pytest.raises(ConfigurationError, match="merged_type is one of Q4_0, Q8_0, not 'Q2_K'"):
        LlamaCppModel(packaged_model_path("smollm2"), merged_type="Q2_K")
