"""The tool registry: one typed definition per tool, from which every adapter is derived.

``ALL_TOOLS`` lists every tool cartagent defines; a :class:`Toolkit` binds the enabled ones to
a PayPal client with an approval policy and spend limits.
"""

from __future__ import annotations

from ._approval import ApprovalCallback, ApprovalRequest, SpendLimits, deny_all
from ._config import ToolkitConfig
from ._registry import ALL_TOOLS
from ._tool import Tool, ToolAnnotations, ToolContext, tool
from ._toolkit import Toolkit, ToolResult

__all__ = [
    "ALL_TOOLS",
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
