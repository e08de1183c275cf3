"""The provider-neutral LLM interface: :class:`Model` and the messages it exchanges."""

from __future__ import annotations

from .model import Completion, Message, Model, Role, ToolCall, ToolSpec, Usage

__all__ = ["Completion", "Message", "Model", "Role", "ToolCall", "ToolSpec", "Usage"]
