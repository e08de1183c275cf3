"""The tool registry: one typed definition per tool, from which every adapter is derived.

``ALL_TOOLS`` lists every PayPal tool cartagent defines; a :class:`Toolkit` binds the enabled
ones to a PayPal client with an approval policy and spend limits. ``MERCHANT_TOOLS`` check out at
another merchant over an agentic-commerce protocol; a toolkit given a ``merchant`` client can
add them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_face

if TYPE_CHECKING:
    from ._approval import ApprovalCallback, ApprovalRequest, SpendLimits, deny_all
    from ._config import ToolkitConfig
    from ._models import Amount, Args
    from ._registry import ALL_TOOLS
    from ._tool import Tool, ToolAnnotations, ToolContext, tool
    from ._toolkit import Toolkit, ToolResult
    from .merchant_checkout import TOOLS as MERCHANT_TOOLS

__all__ = [
    "ALL_TOOLS",
    "MERCHANT_TOOLS",
    "Amount",
    "ApprovalCallback",
    "ApprovalRequest",
    "Args",
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

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "ApprovalCallback": "._approval",
        "ApprovalRequest": "._approval",
        "SpendLimits": "._approval",
        "deny_all": "._approval",
        "ToolkitConfig": "._config",
        "Amount": "._models",
        "Args": "._models",
        "ALL_TOOLS": "._registry",
        "Tool": "._tool",
        "ToolAnnotations": "._tool",
        "ToolContext": "._tool",
        "tool": "._tool",
        "Toolkit": "._toolkit",
        "ToolResult": "._toolkit",
        "MERCHANT_TOOLS": ".merchant_checkout:TOOLS",
    },
)
