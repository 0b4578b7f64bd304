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
from memoryhub.rules import Rule
from records.backends import Page, Record, RecordBackend
from records.services import health
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


# --- the rules of a record's fields and of the record tools' arguments -------------------
# Declared once: the request serializers (records/serializers.py) and the record tools use
# them. The REST list's limit and offset are paging (records/filters.py).


def validate_text(value: Any, field: str = "text") -> str:
    limit = setting("memory.record_chars")
    if not isinstance(value, str) or not value.strip():
        raise ApiError(422, f"{field} must be a non-empty string")
    if len(value) > limit:
        raise ApiError(422, f"{field} is at most {limit} characters")
    return value


def validate_query(value: Any) -> str:
    return validate_text(value, "query")


# At most memory.record_chars characters: a setting, so no maxLength here.
TEXT = Rule(validate_text, {"type": "string", "minLength": 1})
QUERY = Rule(validate_query, {"type": "string", "minLength": 1})


# Deeper metadata than this cannot be sent to mem0 (or read back) without hitting Python's
# recursion limit in the JSON encoder; real metadata is a few levels deep.
METADATA_MAX_DEPTH = 32


def validate_metadata(value: Any) -> dict:
    """Free-form metadata; null is ``{}``."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ApiError(422, "metadata must be an object")
    if _depth(value) > METADATA_MAX_DEPTH:
        raise ApiError(422, f"metadata is nested more than {METADATA_MAX_DEPTH} levels deep")
    return value


METADATA = Rule(validate_metadata, {"type": "object", "additionalProperties": {}})


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
    """An integer in [low, high]; ``from_text`` also takes digits in a string (tool arguments)."""
    if from_text and isinstance(value, str) and _DIGITS.fullmatch(value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ApiError(422, f"{field} is an integer from {low} to {high}")
    return value


def validate_k(value: Any) -> int:
    """How many records a search answers at most; null is the default."""
    return validate_int(DEFAULT_K if value is None else value, "k", 1, MAX_K)


K = Rule(validate_k, {"type": "integer", "minimum": 1, "maximum": MAX_K})


def validate_list_limit(value: Any) -> int:
    """The record_list tool's page size (digits in a string too); left out, the default."""
    value = DEFAULT_LIST_LIMIT if value is None else value
    return validate_int(value, "limit", 1, MAX_LIST_LIMIT, from_text=True)


def validate_list_offset(value: Any) -> int:
    """The record_list tool's records to skip (digits in a string too); left out, 0."""
    return validate_int(0 if value is None else value, "offset", 0, MAX_LIST_OFFSET, from_text=True)


LIST_LIMIT = Rule(validate_list_limit, {"type": "integer", "minimum": 1, "maximum": MAX_LIST_LIMIT})
LIST_OFFSET = Rule(
    validate_list_offset, {"type": "integer", "minimum": 0, "maximum": MAX_LIST_OFFSET}
)


# --- the services ---------------------------------------------------------------------------


def _call(memory: Memory, work: Callable[[RecordBackend, str], T]) -> T:
    """``work`` on the memory's backend and namespace (a record memory has both)."""
    provider, namespace = memory.provider, memory.namespace
    assert provider is not None and namespace is not None
    require_enabled(provider)
    backend = backend_of(provider)
    try:
        result = work(backend, namespace)
    except ApiError as error:
        health.note(provider, error)
        raise
    finally:
        backend.close()
    health.note(provider, None)
    return result


def _audited_write(
    principal: Principal,
    memory: Memory,
    action: str,
    record_id: str | None,
    work: Callable[[RecordBackend, str], T],
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
    principal: Principal,
    memory: Memory | str,
    *,
    limit: int = DEFAULT_LIST_LIMIT,
    offset: int = 0,
) -> Page:
    principal.require(Permission.READ)
    target = get_record_memory(principal, memory)
    return _call(target, lambda b, namespace: b.list(namespace, limit=limit, offset=offset))


def search_records(
    principal: Principal, memory: Memory | str, query: str, k: int = DEFAULT_K
) -> list[Record]:
    principal.require(Permission.READ)
    target = get_record_memory(principal, memory)
    return _call(target, lambda b, namespace: b.search(namespace, query, k))


def get_record(principal: Principal, memory: Memory | str, record_id: str) -> Record:
    principal.require(Permission.READ)
    target = get_record_memory(principal, memory)
    record = _call(target, lambda b, namespace: b.get(namespace, record_id))
    if record is None:
        raise ApiError(404, "record not found")
    return record


def add_record(
    principal: Principal,
    memory: Memory | str,
    text: str,
    metadata: dict | None = None,
    *,
    details: dict | None = None,
) -> Record:
    principal.require(Permission.RUN)
    metadata = {} if metadata is None else metadata
    target = get_record_memory(principal, memory)
    return _audited_write(
        principal,
        target,
        "record.add",
        None,
        lambda b, namespace: b.add(namespace, text, metadata),
        details,
    )


def update_record(
    principal: Principal,
    memory: Memory | str,
    record_id: str,
    *,
    text: str | None = None,
    metadata: dict | None = None,
    details: dict | None = None,
) -> Record:
    """Changes text, metadata or both (a rule across the two fields); None leaves one as is."""
    principal.require(Permission.RUN)
    if text is None and metadata is None:
        raise ApiError(422, "give text, metadata or both")
    target = get_record_memory(principal, memory)
    return _audited_write(
        principal,
        target,
        "record.update",
        record_id,
        lambda b, namespace: b.update(namespace, record_id, text=text, metadata=metadata),
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
        lambda b, namespace: b.delete(namespace, record_id),
        details,
    )
