"""memoryhub's memory tools as OpenAI Agents SDK ``FunctionTool`` s.

``pip install 'memoryhub-client[openai-agents]'``, then::

    from agents import Agent
    from memoryhub.adapters.openai_agents import memory_tools

    agent = Agent(name="Support", tools=memory_tools(inv, paths=["users/{user}/"]))
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from agents import FunctionTool
from agents.tool_context import ToolContext

from memoryhub.client import Invocation, Tools


def memory_tools(
    inv: Invocation, paths: Sequence[str] | None = None, *, mounted: bool = True
) -> list[FunctionTool]:
    """The facts tools for ``paths`` (the whole memory when None) and, unless
    ``mounted=False``, the run's mounted memories' tools, with memoryhub's own names,
    descriptions and schemas. A refusal is the tool's text for the model; only
    ``InvocationEnded`` raises. The facts tools' definitions are fetched here, once; each
    call then runs in a worker thread."""
    tools = inv.memory.tools(paths=paths)
    if mounted:
        tools = inv.tools + tools
    return [_function_tool(tools, definition["function"]) for definition in tools.definitions]


def _function_tool(tools: Tools, function: dict[str, Any]) -> FunctionTool:
    name = function["name"]

    async def invoke(context: ToolContext[Any], arguments: str) -> str:
        call = {
            "id": context.tool_call_id,
            "type": "function",
            "function": {"name": name, "arguments": arguments or "{}"},
        }
        # requests blocks: run the call in a worker thread so the event loop stays free.
        message = await asyncio.to_thread(tools.call, call)
        content: str = message["content"]
        return content

    return FunctionTool(
        name=name,
        description=function.get("description", ""),
        params_json_schema=function["parameters"],
        on_invoke_tool=invoke,
        # memoryhub's schemas have optional arguments, which strict mode cannot express.
        strict_json_schema=False,
    )
