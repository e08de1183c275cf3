"""llama-cpp-python's own OpenAI-compatible server in a child process, for the tests that check
``--model openai`` against a real server (nothing in cartagent starts one)."""

from __future__ import annotations

import os
import sys

import httpx

from cartagent.child_process import ServerProcess

__all__ = ["LlamaServerProcess"]


class LlamaServerProcess(ServerProcess):
    """llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``) for a GGUF.

    Needs ``llama-cpp-python[server]``. Its ``/v1/chat/completions`` takes a JSON Schema as
    ``response_format={"type": "json_object", "schema": ...}`` (``schema_style="json_object"``).
    """

    name = "llama.cpp server"

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        *,
        n_ctx: int = 2048,
        host: str = "127.0.0.1",
        port: int | None = None,
        startup_timeout: float = 60.0,
    ) -> None:
        super().__init__(host=host, port=port, startup_timeout=startup_timeout)
        self.model_path = os.fspath(model_path)
        self.n_ctx = n_ctx

    def command(self) -> list[str]:
        return [
            sys.executable, "-m", "llama_cpp.server", "--model", self.model_path,
            "--host", self.host, "--port", str(self.port), "--n_ctx", str(self.n_ctx),
        ]  # fmt: skip

    def probe(self) -> None:
        httpx.get(f"{self.base_url}/v1/models", timeout=2).raise_for_status()
