"""Records of a record memory: read, search, add, update and delete them in its backend.

No database transaction is held across a backend call. Records have no version: the last
write wins. Every change is audited with the record's id, never its text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

from memoryhub import audit
from memoryhub.conf import setting
from memoryhub.errors import ApiError
from memoryhub.models import Memory, Permission
from memoryhub.principals import Principal
from memoryhub.reasons import Reason
from records.backends import Page, Record, RecordBackend
from records.services.providers import backend_of, require_enabled

T = TypeVar("T")

MAX_K = 100
MAX_LIST_LIMIT = 200
MAX_LIST_OFFSET = 1_000_000
DEFAULT_LIST_LIMIT = 50
DEFAULT_K = 10

RECORD_MEMORIES = Memory.objects.select_related("provider").filter(kind=Memory.Kind.RECORD)


def get_record_memory(principal: Principal, memory: Memory | str) -> Memory:
    """The record memory with this id in the principal's workspace (404 otherwise)."""
    memory_id = memory.id if isinstance(memory, Memory) else memory
    found = (
        RECORD_MEMORIES.filter(workspace_id=principal.workspace_id, pk=memory_id).first()
        if isinstance(memory_id, str)
        else None
    )
    if found is None:
        raise ApiError(404, "record memory not found")
    return found


def validate_text(value: Any, field: str = "text") -> str:
    limit = setting("memory.record_chars")
    if not isinstance(value, str) or not value.strip():
        raise ApiError(422, f"{field} must be a non-empty string")
    if len(value) > limit:
        raise ApiError(422, f"{field} is at most {limit} characters")
    return value


# Deeper metadata than this cannot be sent to mem0 (or read back) without hitting Python's
# recursion limit in the JSON encoder; real metadata is a few levels deep.
METADATA_MAX_DEPTH = 32


def validate_metadata(value: Any) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ApiError(422, "metadata must be an object")
    if _depth(value) > METADATA_MAX_DEPTH:
        raise ApiError(422, f"metadata is nested more than {METADATA_MAX_DEPTH} levels deep")
    return value


def _depth(value: Any) -> int:
    """Levels of objects and arrays (without recursion, whatever the depth)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest


_DIGITS = re.compile(r"[0-9]{1,9}")


def validate_int(value: Any, field: str, low: int, high: int, *, from_text: bool = False) -> int:
    """An integer in [low, high]; ``from_text`` also takes digits in a string (query params)."""
    if from_text and isinstance(value, str) and _DIGITS.fullmatch(value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ApiError(422, f"{field} is an integer from {low} to {high}")
    return value


def _call(memory: Memory, work: Callable[[RecordBackend], T]) -> T:
    require_enabled(memory.provider)
    backend = backend_of(memory.provider)
    try:
        return work(backend)
    finally:
        backend.close()


def _audited_write(
    principal: Principal,
    memory: Memory,
    action: str,
    record_id: str | None,
    work: Callable[[RecordBackend], T],
    details: dict | None = None,
) -> T:
    """Runs a write and audits it; an unconfirmed write is audited as such, then raised."""
    try:
        result = _call(memory, work)
    except ApiError as error:
        if error.reason == Reason.WRITE_UNCONFIRMED:
            audit.record(
                principal,
                action,
                "record",
                record_id or "",
                memory=memory.id,
                confirmed=False,
                **(details or {}),
            )
        raise
    done_id = result.id if isinstance(result, Record) else record_id
    audit.record(principal, action, "record", done_id or "", memory=memory.id, **(details or {}))
    return result


def list_records(
    principal: Principal, memory: Memory | str, *, limit: Any = None, offset: Any = None
) -> Page:
    principal.require(Permission.READ)
    limit = DEFAULT_LIST_LIMIT if limit is None else limit
    limit = validate_int(limit, "limit", 1, MAX_LIST_LIMIT, from_text=True)
    offset = validate_int(
        0 if offset is None else offset, "offset", 0, MAX_LIST_OFFSET, from_text=True
    )
    target = get_record_memory(principal, memory)
    return _call(target, lambda b: b.list(target.namespace, limit=limit, offset=offset))


def search_records(principal: Principal, memory: Memory | str, query: Any, k: Any = None) -> list:
    principal.require(Permission.READ)
    query = validate_text(query, "query")
    k = validate_int(DEFAULT_K if k is None else k, "k", 1, MAX_K)
    target = get_record_memory(principal, memory)
    return _call(target, lambda b: b.search(target.namespace, query, k))


def get_record(principal: Principal, memory: Memory | str, record_id: str) -> Record:
    principal.require(Permission.READ)
    target = get_record_memory(principal, memory)
    record = _call(target, lambda b: b.get(target.namespace, record_id))
    if record is None:
        raise ApiError(404, "record not found")
    return record


def add_record(
    principal: Principal,
    memory: Memory | str,
    text: Any,
    metadata: Any = None,
    *,
    details: dict | None = None,
) -> Record:
    principal.require(Permission.RUN)
    text = validate_text(text)
    metadata = validate_metadata(metadata)
    target = get_record_memory(principal, memory)
    return _audited_write(
        principal,
        target,
        "record.add",
        None,
        lambda b: b.add(target.namespace, text, metadata),
        details,
    )


def update_record(
    principal: Principal,
    memory: Memory | str,
    record_id: str,
    data: dict,
    *,
    details: dict | None = None,
) -> Record:
    principal.require(Permission.RUN)
    if "text" not in data and "metadata" not in data:
        raise ApiError(422, "give text, metadata or both")
    text = validate_text(data["text"]) if "text" in data else None
    metadata = validate_metadata(data["metadata"]) if "metadata" in data else None
    target = get_record_memory(principal, memory)
    return _audited_write(
        principal,
        target,
        "record.update",
        record_id,
        lambda b: b.update(target.namespace, record_id, text=text, metadata=metadata),
        details,
    )


def delete_record(
    principal: Principal, memory: Memory | str, record_id: str, *, details: dict | None = None
) -> None:
    principal.require(Permission.RUN)
    target = get_record_memory(principal, memory)
    _audited_write(
        principal,
        target,
        "record.delete",
        record_id,
        lambda b: b.delete(target.namespace, record_id),
        details,
    )
