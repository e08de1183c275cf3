"""A tiny random Llama with SmolLM2's real tokenizer: training runs end to end in seconds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROWS = [
    (
        "red running shoes under 40 dollars",
        {"text": "running shoes", "options": {"color": ["red"]}, "price": {"max": 40}},
    ),
    ("a cheap backpack", {"text": "backpack", "sort": "price_asc"}),
    (
        "blue t-shirt, not polyester",
        {
            "text": "t-shirt",
            "options": {"color": ["blue"]},
            "exclude": [{"field": "material", "value": "polyester"}],
        },
    ),
    ("headphones between 20 and 60", {"text": "headphones", "price": {"min": 20, "max": 60}}),
    ("best rated coffee maker", {"text": "coffee maker", "sort": "rating"}),
    ("wireless mouse", {"text": "wireless mouse"}),
]


def build_tiny_base(folder: Path) -> None:
    """Save a tiny random Llama (seeded) with SmolLM2's tokenizer into ``folder``."""
    import torch
    import transformers

    from cartagent.llm.packaged import packaged_model_path

    gguf = packaged_model_path("smollm2")
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        tie_word_embeddings=True,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=2,
    )
    transformers.LlamaForCausalLM(config).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))


def tiny_base_folder(scratch: Path) -> str:
    """The tiny base's folder, from the test cache (keyed by the GGUF the tokenizer comes from,
    the library versions and :func:`build_tiny_base` itself)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("peft")
    pytest.importorskip("trl")
    from cartagent.llm.packaged import packaged_model_path
    from tests.cache import cached_folder, file_digest, versions

    key = [
        file_digest(packaged_model_path("smollm2")),
        versions("torch", "transformers", "tokenizers", "safetensors"),
    ]
    return str(cached_folder("tiny-llama", build_tiny_base, key, scratch=scratch))


def write_split(path: Path, copies: int = 4) -> Path:
    rows = [
        {"request": request, "context": [], "completion": json.dumps(gold)}
        for _ in range(copies)
        for request, gold in ROWS
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
