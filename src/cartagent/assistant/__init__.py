"""The assistant: a model plus the toolkit, run one conversational turn at a time."""

from __future__ import annotations

from ..errors import StepLimitExceeded
from .runner import run_turn, tool_specs

__all__ = ["StepLimitExceeded", "run_turn", "tool_specs"]
