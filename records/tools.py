"""The record tools the model calls, declared as :class:`~memoryhub.tools.Tool`.

Tool keys ``record_search`` … ``record_delete`` (``memoryhub.tools``), function names
``memory_record_search`` … ``memory_record_delete``, permission ids
``memory.record.search`` … ``memory.record.delete``. Reading tools need ``read``, writing
tools ``run``. The arguments are checked by the same rules as the REST fields
(``records.services.records``). Every refusal is the text ``error: <code>: <message>``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from memoryhub.errors import ApiError
from memoryhub.models import Memory, Permission
from memoryhub.principals import Principal
from memoryhub.reasons import Code, Reason
from memoryhub.rules import Rule
from memoryhub.tools import (
    Argument,
    Tool,
    choice,
    tool_name,
)
from records.services import records

READ_KEYS = {"record_search", "record_list"}


@dataclass(frozen=True)
class _Call:
    principal: Principal
    memory: Memory  # live, with an enabled provider
    details: dict  # the run and tool call, for the audit log


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _record_id(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ApiError(422, "record_id must be a record's id")
    return value


RECORD_ID = Argument(
    Rule(_record_id, {"type": "string"}),
    "The record's id, as search or list show it.",
    required=True,
)
METADATA = Argument(records.METADATA, "Optional key-value data kept with the record.")


def _search(call: _Call, query: str, k: int = records.DEFAULT_K) -> str:
    found = records.search_records(call.principal, call.memory, query=query, k=k)
    return _dump({"results": [r.as_json() for r in found]})


def _list(call: _Call, limit: int = records.DEFAULT_LIST_LIMIT, offset: int = 0) -> str:
    page = records.list_records(call.principal, call.memory, limit=limit, offset=offset)
    return _dump({"count": page.count, "results": [r.as_json() for r in page.records]})


def _add(call: _Call, text: str, metadata: dict | None = None) -> str:
    record = records.add_record(call.principal, call.memory, text, metadata, details=call.details)
    return _dump(record.as_json())


def _update(
    call: _Call, record_id: str, text: str | None = None, metadata: dict | None = None
) -> str:
    record = records.update_record(
        call.principal, call.memory, record_id, text=text, metadata=metadata, details=call.details
    )
    return _dump(record.as_json())


def _delete(call: _Call, record_id: str) -> str:
    records.delete_record(call.principal, call.memory, record_id, details=call.details)
    return _dump({"deleted": record_id})


def _tool(key: str, description: str, arguments: dict[str, Argument], handler) -> Tool:
    permission = Permission.READ if key in READ_KEYS else Permission.RUN
    return Tool(tool_name(key), description, arguments, permission, handler)


TOOLS: dict[str, Tool] = {
    "record_search": _tool(
        "record_search",
        "Search a record memory for the records closest in meaning to a query.",
        {
            "query": Argument(records.QUERY, "What to look for.", required=True),
            "k": Argument(records.K, f"How many records at most (default {records.DEFAULT_K})."),
        },
        _search,
    ),
    "record_list": _tool(
        "record_list",
        "List the records of a record memory, newest first, one page at a time.",
        {"limit": Argument(records.LIST_LIMIT), "offset": Argument(records.LIST_OFFSET)},
        _list,
    ),
    "record_add": _tool(
        "record_add",
        "Add one short, self-contained record (such as a stable preference or decision)."
        " Search first so that you do not add a duplicate or a contradiction.",
        {"text": Argument(records.TEXT, "The record.", required=True), "metadata": METADATA},
        _add,
    ),
    "record_update": _tool(
        "record_update",
        "Replace the text or metadata of a record. The last write wins.",
        {
            "record_id": RECORD_ID,
            "text": Argument(records.TEXT, "The record's new text."),
            "metadata": METADATA,
        },
        _update,
    ),
    "record_delete": _tool(
        "record_delete",
        "Delete a record that is wrong or no longer true.",
        {"record_id": RECORD_ID},
        _delete,
    ),
}


def tool(key: str, memories: Sequence[str] | None = None) -> Tool:
    """One record tool; with ``memories`` (the mount names a run may address) it takes a
    required ``memory`` argument naming one of them."""
    found = TOOLS[key]
    if memories is None:
        return found
    memory = choice("memory", list(memories), "The name of the mounted record memory.")
    return replace(found, arguments={"memory": memory, **found.arguments})


def _live_memory(principal: Principal, memory: Memory | str) -> Memory:
    try:
        found = records.get_record_memory(principal, memory)
    except ApiError:
        raise ApiError(404, "the memory was deleted", reason=Reason.MEMORY_DELETED) from None
    if found.provider is None or not found.provider.enabled:
        raise ApiError(503, "the memory's provider is disabled", code=Code.UNAVAILABLE)
    return found


def run_record_tool(
    principal: Principal,
    memory: Memory | str,
    tool: Tool,
    arguments: dict,
    *,
    run_id: str | None = None,
    tool_call_id: str | None = None,
    access: str = "write",
) -> str:
    """Run one record tool with checked arguments; answers the tool message's content.

    A memory that is gone answers ``memory_deleted``, one whose provider is disabled
    ``unavailable``; a ``read`` mount refuses the writing tools.
    """
    try:
        if access != "write" and tool.permission != Permission.READ:
            raise ApiError(403, "this memory is mounted read-only", code=Code.FORBIDDEN)
        target = _live_memory(principal, memory)
        details = {k: v for k, v in (("run", run_id), ("tool_call", tool_call_id)) if v}
        return tool.handler(_Call(principal, target, details), **arguments)
    except ApiError as error:
        return error.as_tool_text()
