"""The one place cartagent reads its environment. Library code takes explicit arguments."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


def _data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "cartagent"


@dataclass(frozen=True)
class SandboxSettings:
    db_url: str
    host: str
    port: int
    client_id: str
    client_secret: str

    @classmethod
    def from_env(cls) -> SandboxSettings:
        env = os.environ
        return cls(
            db_url=env.get("CARTAGENT_SANDBOX_DB") or f"sqlite:///{_data_dir() / 'sandbox.db'}",
            host=env.get("CARTAGENT_SANDBOX_HOST", "127.0.0.1"),
            port=int(env.get("CARTAGENT_SANDBOX_PORT", "8765")),
            client_id=env.get("CARTAGENT_SANDBOX_CLIENT_ID", "cartagent-sandbox-client"),
            client_secret=env.get("CARTAGENT_SANDBOX_CLIENT_SECRET", "cartagent-sandbox-secret"),
        )


@dataclass(frozen=True)
class LLMEndpointSettings:
    """An OpenAI-compatible endpoint for query understanding (``--model openai``).

    ``prompt_style`` is the prompt it is asked with: ``full`` (few-shot, for a general model), or
    the style an adapter served there (vLLM ``--lora-modules``) was trained on."""

    base_url: str | None
    model: str
    api_key: str | None
    schema_style: str
    prompt_style: str = "full"

    @classmethod
    def from_env(cls) -> LLMEndpointSettings:
        env = os.environ
        return cls(
            base_url=env.get("CARTAGENT_LLM_BASE_URL") or None,
            model=env.get("CARTAGENT_LLM_MODEL", "default"),
            api_key=env.get("CARTAGENT_LLM_API_KEY") or None,
            schema_style=env.get("CARTAGENT_LLM_SCHEMA_STYLE", "json_schema"),
            prompt_style=env.get("CARTAGENT_LLM_PROMPT_STYLE", "full"),
        )


@dataclass(frozen=True)
class AdapterSettings:
    """``CARTAGENT_SEARCH_ADAPTER``: a GGUF LoRA file for ``--model tuned`` (default: the shipped
    one); ``CARTAGENT_REGISTRY``: the model registry folder (default: in the data folder)."""

    search_adapter: Path | None
    registry: Path

    @classmethod
    def from_env(cls) -> AdapterSettings:
        value = os.environ.get("CARTAGENT_SEARCH_ADAPTER") or None
        registry = os.environ.get("CARTAGENT_REGISTRY") or str(_data_dir() / "registry")
        return cls(
            search_adapter=Path(value).expanduser() if value else None,
            registry=Path(registry).expanduser(),
        )
