"""Adapters presenting the toolkit's tools to agent frameworks, all derived from the registry.

Each lives in its own module and imports its framework there only, so ``import cartagent``
never needs any of them (install the matching extra: ``openai``, ``langchain``,
``openai-agents``):

- :mod:`.openai_tools`: OpenAI function-calling definitions and a ``tool_call`` dispatcher
  (needs no package at all);
- :mod:`.langchain`: LangChain ``StructuredTool`` objects;
- :mod:`.openai_agents`: OpenAI Agents SDK ``FunctionTool`` objects.
"""

from __future__ import annotations

from ._schema import strict_compatible

__all__ = ["strict_compatible"]
