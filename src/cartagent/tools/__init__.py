"""The tool registry: one typed definition per tool, from which every adapter is derived.

``ALL_TOOLS`` lists every PayPal tool cartagent defines; a :class:`Toolkit` binds the enabled
ones to a PayPal client with an approval policy and spend limits. ``MERCHANT_TOOLS`` check out at
another merchant over an agentic-commerce protocol; a toolkit given a ``merchant`` client can
add them.
"""

from __future__ import annotations

from ._approval import ApprovalCallback, ApprovalRequest, SpendLimits, deny_all
from ._config import ToolkitConfig
from ._registry import ALL_TOOLS
from ._tool import Tool, ToolAnnotations, ToolContext, tool
from ._toolkit import Toolkit, ToolResult
from .merchant_checkout import TOOLS as MERCHANT_TOOLS

__all__ = [
    "ALL_TOOLS",
    "MERCHANT_TOOLS",
    "ApprovalCallback",
    "ApprovalRequest",
    "SpendLimits",
    "Tool",
    "ToolAnnotations",
    "ToolContext",
    "ToolResult",
    "Toolkit",
    "ToolkitConfig",
    "deny_all",
    "tool",
]
