"""Executing a run's tool calls against its frozen mounts, each call id at most once.

A file tool's write and the record of its call commit in one transaction, so a worker that
dies mid-call leaves neither and the retry runs it once. A record tool talks to a backend
outside the database: its call is recorded as started before the backend is asked, and a
retry that finds it started answers that the outcome is unknown instead of writing twice.
"""

from __future__ import annotations

import hashlib
import json

from django.db import IntegrityError, transaction
from django.utils import timezone

from filememory.tools import execute_file_tool
from memoryhub.errors import ApiError
from memoryhub.models import Permission, Run
from memoryhub.principals import Principal
from memoryhub.services.common import get_in_workspace
from memoryhub.tools import FILE_TOOL_KEYS, MAX_TOOL_CALL_ID, RECORD_TOOL_KEYS, parse_arguments
from records.tools import execute_record_tool
from threads.models import RunMount, ToolCall
from threads.services.toolset import disabled_tools, tool_allowed

OUTCOME_UNKNOWN = (
    "error: outcome_unknown: an earlier attempt of this tool call did not finish, so it may "
    "or may not have happened; read the file or search the records before writing again"
)


def _run_of(principal: Principal, run_id: str) -> Run:
    if principal.run is not None and principal.run.id != run_id:
        raise ApiError(404, "run not found")
    run = get_in_workspace(Run.objects.select_related("agent"), principal, run_id, "run")
    if not run.is_running:
        raise ApiError(401, "the run has ended", reason="run_ended")
    return run


def _digest(name: str, arguments: dict) -> str:
    canonical = json.dumps([name, arguments], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _tool_key(name: object) -> str:
    key = name.removeprefix("memory_") if isinstance(name, str) else ""
    if key not in FILE_TOOL_KEYS + RECORD_TOOL_KEYS or name != f"memory_{key}":
        raise ApiError(422, f"{name!r} is not a memory tool")
    return key


def _mount_for(run: Run, key: str, arguments: dict) -> RunMount:
    kind = "file" if key in FILE_TOOL_KEYS else "record"
    mounts = [m for m in RunMount.objects.filter(run=run) if m.kind == kind]
    if key in disabled_tools(run.agent) or not mounts or run.inline:
        raise ApiError(403, f"memory_{key} is not offered to this run", code="forbidden")
    if len(mounts) == 1:
        return mounts[0]
    chosen = arguments.get("memory")
    for mount in mounts:
        if mount.name == chosen:
            return mount
    names = ", ".join(m.name for m in mounts)
    raise ApiError(422, f"memory must be one of: {names}")


def _execute(
    principal: Principal, run: Run, key: str, call_id: str, name: str, arguments: dict
) -> str:
    try:
        mount = _mount_for(run, key, arguments)
        if not tool_allowed(key, mount.access):
            raise ApiError(403, f"{mount.name} is mounted read-only", code="forbidden")
        needed = Permission.READ if tool_allowed(key, "read") else Permission.RUN
        if not principal.has(needed):
            raise ApiError(403, f"this tool needs the {needed} permission", code="forbidden")
    except ApiError as error:
        return error.as_tool_text()
    common = {
        "run_id": run.id,
        "tool_call_id": call_id,
        "name": name,
        "arguments": {k: v for k, v in arguments.items() if k != "memory"},
        "access": mount.access,
    }
    if key in FILE_TOOL_KEYS:
        return execute_file_tool(principal, mount.memory_id, thread_id=run.thread_id, **common)
    return execute_record_tool(principal, mount.memory_id, **common)


def _answer(call_id: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def _earlier(run: Run, call_id: str, digest: str) -> dict | None:
    earlier = ToolCall.objects.filter(run=run, call_id=call_id).first()
    if earlier is None:
        return None
    if earlier.arguments_digest != digest:
        raise ApiError(
            409, "this tool call id was used with other arguments", reason="tool_call_reused"
        )
    if earlier.status == ToolCall.Status.STARTED:
        return _answer(call_id, OUTCOME_UNKNOWN)
    return _answer(call_id, earlier.content)


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
    found = _earlier(run, call_id, digest)
    if found is not None:
        return found
    try:
        key = _tool_key(name)
    except ApiError as error:
        return _answer(call_id, error.as_tool_text())
    record = ToolCall(
        workspace_id=run.workspace_id,
        run=run,
        call_id=call_id,
        name=name,
        arguments_digest=digest,
        status=ToolCall.Status.STARTED,
    )
    try:
        if key in FILE_TOOL_KEYS:
            with transaction.atomic():
                record.save()
                content = _execute(principal, run, key, call_id, name, arguments)
                _finish(record, content)
        else:
            with transaction.atomic():
                record.save()
            content = _execute(principal, run, key, call_id, name, arguments)
            _finish(record, content)
    except IntegrityError:
        # The same call id arrived twice at once: the other request recorded it first.
        return _earlier(run, call_id, digest) or _answer(call_id, OUTCOME_UNKNOWN)
    return _answer(call_id, content)


def _finish(record: ToolCall, content: str) -> None:
    record.status = ToolCall.Status.DONE
    record.content = content
    record.finished_at = timezone.now()
    record.save(update_fields=["status", "content", "finished_at"])
