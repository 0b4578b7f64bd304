"""A model's tool call run straight against one memory: the file and record tests' way in
without a thread and its mounts. The product runs calls through a run's mounts
(threads.services.tool_calls.execute_tool_call), which parse, offer and check the same way
before the kind's ``run_file_tool`` / ``run_record_tool``."""

from __future__ import annotations

from filememory.tools import file_tools, run_file_tool
from memoryhub.errors import ApiError
from memoryhub.models import Memory
from memoryhub.principals import Principal
from memoryhub.tools import RECORD_TOOL_KEYS, Tool, parse_arguments
from records import tools as record_tools
from records.tools import run_record_tool


def _checked(offered: list[Tool], name: str, arguments: object) -> tuple[Tool, dict]:
    """The tool named ``name`` and its arguments checked (a ``memory`` key is read past)."""
    tool = next((t for t in offered if t.name == name), None)
    if tool is None:
        raise ApiError(422, f"{name!r} is not a memory tool")
    raw = {k: v for k, v in parse_arguments(arguments).items() if k != "memory"}
    return tool, tool.check(raw)


def execute_file_tool(
    principal: Principal,
    memory: Memory | str,
    *,
    name: str,
    arguments: object,
    access: str = "write",
    **call: str | None,  # thread_id, run_id, tool_call_id
) -> str:
    try:
        tool, checked = _checked(file_tools(), name, arguments)
    except ApiError as error:
        return error.as_tool_text()
    return run_file_tool(principal, memory, tool, checked, access=access, **call)


def execute_record_tool(
    principal: Principal,
    memory: Memory | str,
    *,
    name: str,
    arguments: object,
    access: str = "write",
    **call: str | None,  # run_id, tool_call_id
) -> str:
    try:
        offered = [record_tools.tool(key) for key in RECORD_TOOL_KEYS]
        tool, checked = _checked(offered, name, arguments)
    except ApiError as error:
        return error.as_tool_text()
    return run_record_tool(principal, memory, tool, checked, access=access, **call)
