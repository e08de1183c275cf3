"""The one place cartagent reads its environment: :meth:`Settings.from_env`.

The command line reads it once, at its edge, and passes the parts down; library code takes
explicit arguments. Every variable is listed in the README's configuration table.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


def default_data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_DATA_HOME/cartagent``, else ``~/.local/share/cartagent``."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "cartagent"


@dataclass(frozen=True)
class SandboxSettings:
    """The local PayPal sandbox (``cartagent sandbox``) and its demo merchant's credentials."""

    db_url: str
    host: str
    port: int
    client_id: str
    client_secret: str

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"


@dataclass(frozen=True)
class LLMEndpointSettings:
    """An OpenAI-compatible endpoint for query understanding (``--model openai``).

    ``prompt_style`` is the prompt it is asked with: ``full`` (few-shot, for a general model), or
    the style an adapter served there (vLLM ``--lora-modules``) was trained on."""

    base_url: str | None = None
    model: str = "default"
    api_key: str | None = None
    schema_style: str = "json_schema"
    prompt_style: str = "full"


@dataclass(frozen=True)
class AdapterSettings:
    """``search_adapter``: a GGUF LoRA file for ``--model tuned`` (default: the registry's
    production model, else the shipped one); ``registry``: the model registry folder;
    ``merged_type``: how the adapter's weights are stored once folded into the base (``Q4_0``,
    faster, or ``Q8_0``, closer to the adapter as trained)."""

    registry: Path
    search_adapter: Path | None = None
    merged_type: str = "Q4_0"


@dataclass(frozen=True)
class PayPalSettings:
    """The PayPal endpoint the assistant, the merchant and the MCP server pay through (None:
    each command's default) and the PayPal merchant id the Cart API serves."""

    base_url: str | None = None
    client_id: str | None = None
    client_secret: str | None = None
    merchant_id: str | None = None


@dataclass(frozen=True)
class MCPSettings:
    """``cartagent mcp``: its static bearer token or OAuth issuer, enabled actions, catalog."""

    token: str | None = None
    issuer: str | None = None
    jwks_url: str | None = None
    actions: str | None = None
    catalog: str | None = None


@dataclass(frozen=True)
class MerchantSettings:
    """``cartagent merchant``: where checkouts are kept, agents' token, signing and webhooks
    (``agent_token`` is also the token ``cartagent chat --merchant-url`` sends)."""

    db_url: str | None = None
    agent_token: str | None = None
    signing_secret: str | None = None
    webhook_url: str | None = None
    webhook_secret: str | None = None


@dataclass(frozen=True)
class Settings:
    """Everything cartagent takes from its environment (``from_env({})``: the defaults)."""

    data_dir: Path
    sandbox: SandboxSettings
    llm: LLMEndpointSettings
    adapter: AdapterSettings
    paypal: PayPalSettings
    mcp: MCPSettings
    merchant: MerchantSettings
    api_keys_file: Path | None
    embedder: str | None = None
    """``CARTAGENT_EMBEDDER``: the embedder dense and hybrid search use (None: the default)."""

    @classmethod
    def defaults(cls) -> Settings:
        """The built-in defaults, reading no environment (what a library call starts from)."""
        return cls.from_env({})

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings ``environ`` (default: this process's environment) gives."""
        env = os.environ if environ is None else environ

        def get(name: str) -> str | None:
            return env.get(name) or None

        def path(name: str) -> Path | None:
            value = get(name)
            return Path(value) if value else None

        data_dir = default_data_dir(env)
        adapter = path("CARTAGENT_SEARCH_ADAPTER")
        sandbox = SandboxSettings(
            db_url=get("CARTAGENT_SANDBOX_DB") or f"sqlite:///{data_dir / 'sandbox.db'}",
            host=env.get("CARTAGENT_SANDBOX_HOST", "127.0.0.1"),
            port=int(env.get("CARTAGENT_SANDBOX_PORT", "8765")),
            client_id=env.get("CARTAGENT_SANDBOX_CLIENT_ID", "cartagent-sandbox-client"),
            client_secret=env.get("CARTAGENT_SANDBOX_CLIENT_SECRET", "cartagent-sandbox-secret"),
        )
        return cls(
            data_dir=data_dir,
            sandbox=sandbox,
            llm=LLMEndpointSettings(
                base_url=get("CARTAGENT_LLM_BASE_URL"),
                model=env.get("CARTAGENT_LLM_MODEL", "default"),
                api_key=get("CARTAGENT_LLM_API_KEY"),
                schema_style=env.get("CARTAGENT_LLM_SCHEMA_STYLE", "json_schema"),
                prompt_style=env.get("CARTAGENT_LLM_PROMPT_STYLE", "full"),
            ),
            adapter=AdapterSettings(
                registry=(path("CARTAGENT_REGISTRY") or data_dir / "registry").expanduser(),
                search_adapter=adapter.expanduser() if adapter else None,
                merged_type=env.get("CARTAGENT_MERGED_TYPE", "Q4_0"),
            ),
            paypal=PayPalSettings(
                base_url=get("CARTAGENT_PAYPAL_BASE_URL"),
                client_id=get("CARTAGENT_PAYPAL_CLIENT_ID"),
                client_secret=get("CARTAGENT_PAYPAL_CLIENT_SECRET"),
                merchant_id=get("CARTAGENT_PAYPAL_MERCHANT_ID"),
            ),
            mcp=MCPSettings(
                token=get("CARTAGENT_MCP_TOKEN"),
                issuer=get("CARTAGENT_MCP_ISSUER"),
                jwks_url=get("CARTAGENT_MCP_JWKS_URL"),
                actions=get("CARTAGENT_MCP_ACTIONS"),
                catalog=get("CARTAGENT_CATALOG"),
            ),
            merchant=MerchantSettings(
                db_url=get("CARTAGENT_MERCHANT_DB"),
                agent_token=get("CARTAGENT_MERCHANT_AGENT_TOKEN"),
                signing_secret=get("CARTAGENT_MERCHANT_SIGNING_SECRET"),
                webhook_url=get("CARTAGENT_MERCHANT_WEBHOOK_URL"),
                webhook_secret=get("CARTAGENT_MERCHANT_WEBHOOK_SECRET"),
            ),
            api_keys_file=path("CARTAGENT_API_KEYS_FILE"),
            embedder=get("CARTAGENT_EMBEDDER"),
        )
