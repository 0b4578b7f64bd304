"""The record tools the model calls: OpenAI definitions and one entry point that runs them.

Tool keys ``record_search`` … ``record_delete`` (``memoryhub.tools``), function names
``memory_record_search`` … ``memory_record_delete``, permission ids
``memory.record.search`` … ``memory.record.delete``. Reading tools need ``read``, writing
tools ``run``. Every refusal is the text ``error: <code>: <message>``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from memoryhub.errors import ApiError
from memoryhub.models import Memory
from memoryhub.principals import Principal
from memoryhub.reasons import Code, Reason
from memoryhub.tools import RECORD_TOOL_KEYS, parse_arguments, permission_id, tool_name
from records.services import records

READ_KEYS = {"record_search", "record_list"}

_RECORD_ID = {"type": "string", "description": "The record's id, as search or list show it."}
_METADATA = {
    "type": "object",
    "description": "Optional key-value data kept with the record.",
}

SPECS: dict[str, tuple[str, dict, list[str]]] = {
    "record_search": (
        "Search a record memory for the records closest in meaning to a query.",
        {
            "query": {"type": "string", "description": "What to look for."},
            "k": {
                "type": "integer",
                "minimum": 1,
                "maximum": records.MAX_K,
                "description": "How many records at most (default 10).",
            },
        },
        ["query"],
    ),
    "record_list": (
        "List the records of a record memory, newest first, one page at a time.",
        {
            "limit": {"type": "integer", "minimum": 1, "maximum": records.MAX_LIST_LIMIT},
            "offset": {"type": "integer", "minimum": 0},
        },
        [],
    ),
    "record_add": (
        "Add one short, self-contained record (such as a stable preference or decision)."
        " Search first so that you do not add a duplicate or a contradiction.",
        {"text": {"type": "string", "description": "The record."}, "metadata": _METADATA},
        ["text"],
    ),
    "record_update": (
        "Replace the text or metadata of a record. The last write wins.",
        {
            "record_id": _RECORD_ID,
            "text": {"type": "string", "description": "The record's new text."},
            "metadata": _METADATA,
        },
        ["record_id"],
    ),
    "record_delete": (
        "Delete a record that is wrong or no longer true.",
        {"record_id": _RECORD_ID},
        ["record_id"],
    ),
}


def definition(key: str, memories: Sequence[str] | None = None) -> dict:
    """The OpenAI function definition of one record tool.

    With ``memories`` (the mount names a run may address) the tool takes a required
    ``memory`` argument naming one of them.
    """
    description, properties, required = SPECS[key]
    properties = dict(properties)
    required = list(required)
    if memories is not None:
        properties = {
            "memory": {
                "type": "string",
                "enum": list(memories),
                "description": "The name of the mounted record memory.",
            },
            **properties,
        }
        required = ["memory", *required]
    return {
        "type": "function",
        "function": {
            "name": tool_name(key),
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


def definitions(
    keys: Iterable[str] = RECORD_TOOL_KEYS, memories: Sequence[str] | None = None
) -> list[dict]:
    return [definition(key, memories) for key in RECORD_TOOL_KEYS if key in set(keys)]


def key_of(name: str) -> str | None:
    """``memory_record_add`` -> ``record_add``; None for a name that is no record tool."""
    key = name.removeprefix("memory_") if isinstance(name, str) else ""
    return key if key in RECORD_TOOL_KEYS and name == tool_name(key) else None


def permission_of(name: str) -> str | None:
    key = key_of(name)
    return permission_id(key) if key else None


def _check_fields(key: str, args: dict) -> None:
    _, properties, required = SPECS[key]
    unknown = sorted(set(args) - set(properties) - {"memory"})
    if unknown:
        raise ApiError(422, f"unknown arguments: {', '.join(unknown)}")
    missing = [name for name in required if name not in args]
    if missing:
        raise ApiError(422, f"missing arguments: {', '.join(missing)}")


def _live_memory(principal: Principal, memory: Memory | str) -> Memory:
    try:
        found = records.get_record_memory(principal, memory)
    except ApiError:
        raise ApiError(404, "the memory was deleted", reason=Reason.MEMORY_DELETED) from None
    if found.provider is None or not found.provider.enabled:
        raise ApiError(503, "the memory's provider is disabled", code=Code.UNAVAILABLE)
    return found


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _run(principal: Principal, memory: Memory, key: str, args: dict, details: dict) -> str:
    if key == "record_search":
        found = records.search_records(
            principal, memory, query=records.QUERY(args["query"]), k=records.K(args.get("k"))
        )
        return _dump({"results": [r.as_json() for r in found]})
    if key == "record_list":
        limit, offset = (
            records.LIST_LIMIT(args.get("limit")),
            records.LIST_OFFSET(args.get("offset")),
        )
        page = records.list_records(principal, memory, limit=limit, offset=offset)
        return _dump({"count": page.count, "results": [r.as_json() for r in page.records]})
    if key == "record_add":
        text, metadata = records.TEXT(args["text"]), records.METADATA(args.get("metadata"))
        record = records.add_record(principal, memory, text, metadata, details=details)
        return _dump(record.as_json())
    if key == "record_update":
        record_id = _record_id(args)
        change = {
            f: rule(args[f])
            for f, rule in (("text", records.TEXT), ("metadata", records.METADATA))
            if f in args
        }
        record = records.update_record(principal, memory, record_id, **change, details=details)
        return _dump(record.as_json())
    records.delete_record(principal, memory, _record_id(args), details=details)
    return _dump({"deleted": args["record_id"]})


def _record_id(args: dict) -> str:
    record_id = args.get("record_id")
    if not isinstance(record_id, str) or not record_id:
        raise ApiError(422, "record_id must be a record's id")
    return record_id


def execute_record_tool(
    principal: Principal,
    memory: Memory | str,
    *,
    run_id: str | None = None,
    tool_call_id: str | None = None,
    name: str,
    arguments: Any,
    access: str = "write",
) -> str:
    """Runs one record tool call on ``memory`` and answers the tool message's content.

    ``memory`` is the mounted memory (or its id); one that is gone answers
    ``memory_deleted``, one whose provider is disabled ``unavailable``. ``access`` is the
    mount's: a ``read`` mount refuses the writing tools.
    """
    key = key_of(name)
    try:
        if key is None:
            raise ApiError(422, f"{name} is not a record tool")
        args = parse_arguments(arguments)
        _check_fields(key, args)
        if access != "write" and key not in READ_KEYS:
            raise ApiError(403, "this memory is mounted read-only", code=Code.FORBIDDEN)
        target = _live_memory(principal, memory)
        details = {k: v for k, v in (("run", run_id), ("tool_call", tool_call_id)) if v}
        return _run(principal, target, key, args, details)
    except ApiError as error:
        return error.as_tool_text()
