"""Executing a run's tool calls against its frozen mounts, each call id at most once.

The at-most-once rule is the kernel's (``memoryhub.tool_calls``), shared with the facts
tools: one record per run and call id, whichever endpoint received it. A file tool's write
and the record of its call commit in one transaction; a record tool talks to a backend
outside the database, so a retry of a call that never finished answers that its outcome is
unknown instead of writing twice.
"""

from __future__ import annotations

from memoryhub import tool_calls
from memoryhub.catalog import MemoryKind, kind_of_tool
from memoryhub.errors import ApiError
from memoryhub.models import Permission, Run
from memoryhub.principals import Principal
from memoryhub.reasons import Code, Reason
from memoryhub.services.common import get_in_workspace
from memoryhub.tools import MAX_TOOL_CALL_ID, Tool, parse_arguments
from threads.models import RunMount
from threads.services.toolset import disabled_tools


def _run_of(principal: Principal, run_id: str) -> Run:
    if principal.run is not None and principal.run.id != run_id:
        raise ApiError(404, "run not found")
    run = get_in_workspace(Run.objects.select_related("agent"), principal, run_id, "run")
    if not run.is_running:
        raise ApiError(401, "the run has ended", reason=Reason.RUN_ENDED)
    return run


def _digest(name: str, arguments: dict) -> str:
    return tool_calls.digest(name, arguments)  # the same digest as before the kernel took it


def _tool_of(name: object) -> tuple[str, MemoryKind]:
    """The toolset key of a memory tool's function name, and the kind that has it."""
    key = name.removeprefix("memory_") if isinstance(name, str) else ""
    kind = kind_of_tool(key)
    if kind is None or name != f"memory_{key}":
        raise ApiError(422, f"{name!r} is not a memory tool")
    return key, kind


def _offered(run: Run, key: str, kind: MemoryKind, arguments: dict) -> tuple[RunMount, Tool, dict]:
    """The mount a call reaches, the tool as this run was offered it, and its arguments
    checked by that tool.

    The offered tool checks the arguments: ``memory`` (with several mounts of the kind)
    names one of the mounts it may reach. Naming a read-only mount for a writing tool, or
    calling one with a single read-only mount, is refused as such.
    """
    mounts = list(RunMount.objects.filter(run=run))
    of_kind = [m for m in mounts if m.kind == kind.kind]
    disabled = disabled_tools(run.agent)
    if key in disabled or not of_kind or run.inline:
        raise ApiError(403, f"memory_{key} is not offered to this run", code=Code.FORBIDDEN)
    named = of_kind[0] if len(of_kind) == 1 else _named(of_kind, arguments.get("memory"))
    if named is not None and not kind.tool_allowed(key, named.access):
        raise ApiError(403, f"{named.name} is mounted read-only", code=Code.FORBIDDEN)
    tool = next((t for t in kind.tools(of_kind, disabled) if t.name == f"memory_{key}"), None)
    if tool is None:  # no mount it may reach is named: say which ones there are
        names = ", ".join(m.name for m in of_kind)
        raise ApiError(422, f"memory must be one of: {names}")
    checked = tool.check(arguments)
    mount = named or _named(of_kind, checked["memory"])
    assert mount is not None  # the tool's check takes only the name of one of of_kind
    return mount, tool, checked


def _named(mounts: list[RunMount], name: object) -> RunMount | None:
    return next((m for m in mounts if m.name == name), None)


def _execute(
    principal: Principal,
    run: Run,
    tool: tuple[str, MemoryKind],
    call_id: str,
    name: str,
    arguments: dict,
) -> str:
    key, kind = tool
    try:
        mount, offered, checked = _offered(run, key, kind, arguments)
    except ApiError as error:
        return error.as_tool_text()
    # The kind's tool checks the caller's permission (read, or run to write), once.
    return kind.run_tool(
        principal,
        mount,
        offered,
        {k: v for k, v in checked.items() if k != "memory"},
        run=run,
        tool_call_id=call_id,
    )


def _answer(call_id: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def execute_tool_call(
    principal: Principal, run_id: str, call_id: object, name: object, arguments: object
) -> dict:
    """Run one tool call of the model and answer the tool message."""
    principal.require(Permission.READ)
    if not isinstance(call_id, str) or not 1 <= len(call_id) <= MAX_TOOL_CALL_ID:
        raise ApiError(422, f"id must be the tool call's id (1-{MAX_TOOL_CALL_ID} characters)")
    if not isinstance(name, str):
        raise ApiError(422, "name must be a tool name")
    arguments = parse_arguments(arguments)
    run = _run_of(principal, run_id)
    digest = _digest(name, arguments)
    # An id seen before answers first, even under a name that is no memory tool here
    # (the facts endpoint shares the record).
    found = tool_calls.earlier_content(run, call_id, digest)
    if found is not None:
        return _answer(call_id, found)
    try:
        tool = _tool_of(name)
    except ApiError as error:
        return _answer(call_id, error.as_tool_text())  # not recorded: nothing was done
    content = tool_calls.at_most_once(
        run,
        call_id,
        name,
        digest,
        lambda: _execute(principal, run, tool, call_id, name, arguments),
        transactional=tool[1].tools_in_database,
        arguments=arguments,
    )
    return _answer(call_id, content)
