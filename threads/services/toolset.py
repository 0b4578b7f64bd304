"""The tool definitions a run is offered for its frozen mounts.

Each kind offers its tools for the run's mounts of it (``MemoryKind.tools``),
filtered by each mount's access, the agent's disabled tools and the toolset switch. When a
run has several memories of one kind, that kind's tools take a ``memory`` argument whose
values are exactly the mount names the tool may reach.
"""

from __future__ import annotations

from memoryhub.catalog import kinds
from memoryhub.models import Agent
from memoryhub.tools import Tool
from threads.models import RunMount


def disabled_tools(agent: Agent) -> set[str]:
    """Tool keys this agent's runs never get; every key when the toolset is off."""
    toolset = agent.toolset or {}
    if not toolset.get("enabled", True):
        return {key for kind in kinds() for key in kind.tool_keys}
    return set(toolset.get("disabled_tools", []))


def run_tools(agent: Agent, mounts: list[RunMount]) -> list[Tool]:
    disabled = disabled_tools(agent)
    offered: list[Tool] = []
    for kind in kinds():
        of_kind = [m for m in mounts if m.kind == kind.kind]
        if of_kind:
            offered += kind.tools(of_kind, disabled)
    return offered


def run_tool_definitions(agent: Agent, mounts: list[RunMount]) -> list[dict]:
    return [tool.definition() for tool in run_tools(agent, mounts)]
