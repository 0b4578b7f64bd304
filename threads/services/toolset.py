"""The tool definitions a run is offered for its frozen mounts.

File tools are offered for mounted file memories, record tools for mounted record
memories, each filtered by the mount's access, the agent's disabled tools and the toolset
switch. When a run has several memories of one kind, that kind's tools take a ``memory``
argument whose values are exactly the mount names the tool may reach.
"""

from __future__ import annotations

from filememory.tools import file_tool_definitions
from memoryhub.models import Agent
from memoryhub.tools import FILE_TOOL_KEYS, RECORD_TOOL_KEYS
from records.tools import READ_KEYS as RECORD_READ_KEYS
from records.tools import definition as record_tool_definition
from threads.models import RunMount

FILE_READ_KEYS = {"file_view"}


def disabled_tools(agent: Agent) -> set[str]:
    """Tool keys this agent's runs never get; every key when the toolset is off."""
    toolset = agent.toolset or {}
    if not toolset.get("enabled", True):
        return set(FILE_TOOL_KEYS) | set(RECORD_TOOL_KEYS)
    return set(toolset.get("disabled_tools", []))


def tool_allowed(key: str, access: str) -> bool:
    return access == "write" or key in FILE_READ_KEYS | RECORD_READ_KEYS


def run_tool_definitions(agent: Agent, mounts: list[RunMount]) -> list[dict]:
    disabled = disabled_tools(agent)
    files = [m for m in mounts if m.kind == "file"]
    records = [m for m in mounts if m.kind == "record"]
    definitions: list[dict] = []
    if files:
        several = len(files) > 1
        definitions += file_tool_definitions(
            [m.name for m in files] if several else None,
            {m.name: m.access for m in files} if several else files[0].access,
            disabled,
        )
    for key in RECORD_TOOL_KEYS:
        if key in disabled or not records:
            continue
        names = [m.name for m in records if tool_allowed(key, m.access)]
        if names:
            definitions.append(record_tool_definition(key, names if len(records) > 1 else None))
    return definitions
