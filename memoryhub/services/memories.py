"""The catalog of memories: create, list, change and delete memories of every kind.

The catalog knows no kind. What only one kind knows (its extra create fields, its stats,
what deleting one of its memories sets off) comes from the kind's
:class:`memoryhub.catalog.MemoryKind`, registered by the kind's app.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import QuerySet

from memoryhub import audit, catalog, extensions
from memoryhub.conf import setting
from memoryhub.errors import ApiError
from memoryhub.models import Memory, Permission
from memoryhub.principals import Principal
from memoryhub.reasons import Code
from memoryhub.services.common import bump_version, get_in_workspace, validate_name

COMMON_CREATE_FIELDS = {"name", "description", "labels", "type", "guide", "always_load"}
PATCH_FIELDS = {"name", "description", "labels", "guide", "always_load"}
FIXED_FIELDS = {"type", "provider_id", "namespace"}  # never change after create

MAX_DESCRIPTION_CHARS = 4000
MAX_LABELS = 32
MAX_LABEL_CHARS = 64
MAX_ALWAYS_LOAD = 64
DEFAULT_TYPE = "postgres"


def create_fields() -> set[str]:
    """Every body field a create may carry: the common ones and each kind's own."""
    fields = set(COMMON_CREATE_FIELDS)
    for kind in catalog.kinds():
        fields |= kind.create_fields
    return fields


def _text(value: Any, field: str, *, max_chars: int, allow_empty: bool = True) -> str:
    if not isinstance(value, str):
        raise ApiError(422, f"{field} must be a string")
    if not allow_empty and not value.strip():
        raise ApiError(422, f"{field} must not be empty")
    if len(value) > max_chars:
        raise ApiError(422, f"{field} is at most {max_chars} characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ApiError(422, f"{field} is not valid Unicode text") from None
    return value


def _labels(value: Any) -> list[str]:
    if not isinstance(value, list):
        raise ApiError(422, "labels must be a list of strings")
    if len(value) > MAX_LABELS:
        raise ApiError(422, f"labels holds at most {MAX_LABELS} labels")
    labels: list[str] = []
    for index, label in enumerate(value):
        label = _text(label, f"labels[{index}]", max_chars=MAX_LABEL_CHARS, allow_empty=False)
        if label not in labels:
            labels.append(label)
    return labels


def _guide(value: Any) -> str | None:
    if value is None:
        return None
    guide = _text(value, "guide", max_chars=10**6)
    limit = setting("memory.guide_bytes")
    if len(guide.encode("utf-8")) > limit:
        raise ApiError(422, f"guide is at most {limit} bytes (UTF-8)")
    return guide


def _always_load(kind: catalog.MemoryKind, value: Any) -> list:
    if not kind.always_load and value != []:
        raise ApiError(422, f"always_load does not apply to a {kind.kind} memory")
    if not isinstance(value, list):
        raise ApiError(422, "always_load must be a list of paths")
    if len(value) > MAX_ALWAYS_LOAD:
        raise ApiError(422, f"always_load names at most {MAX_ALWAYS_LOAD} paths")
    if kind.clean_always_load is not None:
        return kind.clean_always_load(value)
    return value


def _common_fields(kind: catalog.MemoryKind, data: dict) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if "name" in data:
        fields["name"] = validate_name(data["name"])
    if "description" in data:
        fields["description"] = _text(
            data["description"], "description", max_chars=MAX_DESCRIPTION_CHARS
        )
    if "labels" in data:
        fields["labels"] = _labels(data["labels"])
    if "guide" in data:
        fields["guide"] = _guide(data["guide"])
    if "always_load" in data:
        fields["always_load"] = _always_load(kind, data["always_load"])
    return fields


def _kind_of_memory(memory: Memory) -> catalog.MemoryKind:
    return catalog.kind_named(memory.kind)


def inherited_guide(memory: Memory) -> str:
    """The guide ``guide: null`` resolves to: the deployment's for the kind, else built-in."""
    try:
        configured = setting(f"memory.default_guide.{memory.kind}")
    except KeyError:
        configured = None
    if configured is not None:
        return configured
    return catalog.builtin_guide(_kind_of_memory(memory))


def effective_guide(memory: Memory) -> str:
    """The guide agents see: the memory's own, or the inherited one when it has none."""
    return memory.guide if memory.guide is not None else inherited_guide(memory)


def stats_for(memories: Iterable[Memory]) -> dict[str, dict]:
    """Each kind's stats for the given memories, by memory id."""
    by_kind: dict[str, list[Memory]] = {}
    for memory in memories:
        by_kind.setdefault(memory.kind, []).append(memory)
    stats: dict[str, dict] = {}
    for kind_name, members in by_kind.items():
        stats.update(catalog.kind_named(kind_name).stats(members))
    return stats


def create_memory(principal: Principal, data: dict) -> Memory:
    principal.require(Permission.WRITE)
    memory_type = data.get("type", DEFAULT_TYPE)
    kind = catalog.kind_for_type(memory_type)
    foreign = sorted(set(data) - COMMON_CREATE_FIELDS - kind.create_fields)
    if foreign:
        raise ApiError(422, f"a {kind.kind} memory does not take: {', '.join(foreign)}")
    if "name" not in data:
        raise ApiError(422, "missing fields: name")
    fields = _common_fields(kind, data)
    with transaction.atomic():
        fields.update(kind.prepare_create(principal, data))
        try:
            with transaction.atomic():
                memory = Memory.objects.create(
                    workspace=principal.workspace, kind=kind.kind, type=memory_type, **fields
                )
        except IntegrityError:
            raise ApiError(
                409, "another memory uses this namespace", code=Code.ALREADY_EXISTS
            ) from None
        kind.after_create(principal, memory)
        audit.record(principal, "memory.create", "memory", memory.id, kind=kind.kind)
    memory.refresh_from_db()
    return memory


def get_memory(principal: Principal, memory_id: str) -> Memory:
    principal.require(Permission.READ)
    return get_in_workspace(Memory.objects.all(), principal, memory_id, "memory")


def list_memories(
    principal: Principal,
    *,
    labels: list[str] = (),
    kind: str | None = None,
    memory_type: str | None = None,
) -> QuerySet[Memory]:
    principal.require(Permission.READ)
    qs = Memory.objects.filter(workspace_id=principal.workspace_id)
    if kind is not None:
        known = sorted(k.kind for k in catalog.kinds())
        if kind not in known:
            raise ApiError(422, f"kind must be one of: {', '.join(known)}")
        qs = qs.filter(kind=kind)
    if memory_type is not None:
        catalog.kind_for_type(memory_type)
        qs = qs.filter(type=memory_type)
    for label in labels:
        qs = qs.filter(labels__contains=[label])
    return qs.order_by("-created_at", "id")


def update_memory(principal: Principal, memory_id: str, data: dict, if_match: str) -> Memory:
    principal.require(Permission.WRITE)
    fixed = sorted(set(data) & FIXED_FIELDS)
    if fixed:
        raise ApiError(422, f"{', '.join(fixed)} never change")
    unknown = sorted(set(data) - PATCH_FIELDS)
    if unknown:
        raise ApiError(422, f"unknown fields: {', '.join(unknown)}")
    with transaction.atomic():
        memory = get_in_workspace(Memory.objects.all(), principal, memory_id, "memory", lock=True)
        changes = _common_fields(_kind_of_memory(memory), data)
        bump_version(memory, if_match, **changes)
        audit.record(principal, "memory.update", "memory", memory.id, fields=sorted(changes))
    return memory


def delete_memory(principal: Principal, memory_id: str, if_match: str) -> None:
    """Delete a memory and what its kind keeps of it, in one transaction."""
    principal.require(Permission.WRITE)
    with transaction.atomic():
        memory = get_in_workspace(Memory.objects.all(), principal, memory_id, "memory", lock=True)
        bump_version(memory, if_match)
        _kind_of_memory(memory).on_delete(principal, memory)
        for deleter in extensions.memory_deleters:
            deleter(principal, memory)
        audit.record(principal, "memory.delete", "memory", memory.id, kind=memory.kind)
        memory.delete()
