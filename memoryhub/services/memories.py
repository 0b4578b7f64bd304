"""The catalog of memories: create, list, change and delete memories of every kind.

The catalog knows no kind. What only one kind knows (its extra create fields, its stats,
what deleting one of its memories sets off) comes from the kind's
:class:`memoryhub.catalog.MemoryKind`, registered by the kind's app.

The rules of the catalog's fields are declared here, once (:class:`~memoryhub.rules.Rule`);
the request serializers (``memoryhub.api.serializers``) and the list's filters
(``memoryhub.api.filters``) check and document with them. What only a kind can say (which
fields it takes, whether ``always_load`` applies and what a path is) stays in the services.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypedDict, Unpack

from django.db import IntegrityError, transaction
from django.db.models import QuerySet

from memoryhub import audit, catalog, extensions
from memoryhub.conf import setting
from memoryhub.errors import ApiError
from memoryhub.models import Memory, MemoryProvider, Permission
from memoryhub.principals import Principal
from memoryhub.reasons import Code
from memoryhub.rules import Rule
from memoryhub.services.common import bump_version, get_in_workspace

MEMORY_TYPES = ("postgres", *MemoryProvider.Type.values)  # what the schema lists
DEFAULT_TYPE = "postgres"
FIXED_FIELDS = ("namespace", "provider_id", "type")  # never change after create

MAX_DESCRIPTION_CHARS = 4000
MAX_LABELS = 32
MAX_LABEL_CHARS = 64
MAX_ALWAYS_LOAD = 64


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


def check_type(value: Any) -> str:
    """A memory type some kind registered (its kind makes the memory)."""
    catalog.kind_for_type(value)  # 422 unless a registered type, so a str
    return str(value)


def check_kind(value: Any) -> str:
    known = sorted(k.kind for k in catalog.kinds())
    if not isinstance(value, str) or value not in known:
        raise ApiError(422, f"kind must be one of: {', '.join(known)}")
    return value


def check_description(value: Any) -> str:
    return _text(value, "description", max_chars=MAX_DESCRIPTION_CHARS)


def check_labels(value: Any) -> list[str]:
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


def check_guide(value: Any) -> str | None:
    if value is None:
        return None
    guide = _text(value, "guide", max_chars=10**6)
    limit = setting("memory.guide_bytes")
    if len(guide.encode("utf-8")) > limit:
        raise ApiError(422, f"guide is at most {limit} bytes (UTF-8)")
    return guide


def check_always_load(value: Any) -> list:
    """A list of paths; whether it applies and what a path is are the kind's (on create)."""
    if not isinstance(value, list):
        raise ApiError(422, "always_load must be a list of paths")
    if len(value) > MAX_ALWAYS_LOAD:
        raise ApiError(422, f"always_load names at most {MAX_ALWAYS_LOAD} paths")
    return value


def check_unchanging(fields: Iterable[str]) -> None:
    """422 for fields of a memory that never change after create."""
    fixed = sorted(set(fields) & set(FIXED_FIELDS))
    if fixed:
        raise ApiError(422, f"{', '.join(fixed)} never change")


TYPE = Rule(check_type, {"type": "string", "enum": list(MEMORY_TYPES)}, component="MemoryType")
KIND = Rule(check_kind, {"type": "string", "enum": Memory.Kind.values})
DESCRIPTION = Rule(check_description, {"type": "string", "maxLength": MAX_DESCRIPTION_CHARS})
LABELS = Rule(
    check_labels,
    {
        "type": "array",
        "items": {"type": "string", "minLength": 1, "maxLength": MAX_LABEL_CHARS},
        "maxItems": MAX_LABELS,
    },
)
GUIDE = Rule(check_guide, {"type": "string"})  # null is a value: the inherited guide
ALWAYS_LOAD = Rule(
    check_always_load,
    {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": MAX_ALWAYS_LOAD},
)
# Each label of ``?label=``, repeated to require several.
LABEL_FILTER = Rule(list, {"type": "array", "items": {"type": "string"}})


def _kind_always_load(kind: catalog.MemoryKind, paths: list) -> list:
    """What only the kind says of always_load: whether it applies, and its paths' rules."""
    if not kind.always_load and paths != []:
        raise ApiError(422, f"always_load does not apply to a {kind.kind} memory")
    if kind.clean_always_load is not None:
        return kind.clean_always_load(paths)
    return paths


def _kind_of_memory(memory: Memory) -> catalog.MemoryKind:
    return catalog.kind_named(memory.kind)


def inherited_guide(memory: Memory) -> str:
    """The guide ``guide: null`` resolves to: the deployment's for the kind, else built-in."""
    try:
        configured: str | None = setting(f"memory.default_guide.{memory.kind}")
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


def create(
    principal: Principal,
    *,
    name: str,
    type: str = DEFAULT_TYPE,
    description: str = "",
    labels: Sequence[str] = (),
    guide: str | None = None,
    always_load: list[str] | None = None,
    **kind_fields: Any,
) -> Memory:
    """A new memory of checked fields, of the kind its type names.

    ``kind_fields`` are the given fields only some kind takes (a record memory's
    ``provider_id`` and ``namespace``): another kind refuses them, and the kind checks them
    (``prepare_create``), as it checks ``always_load``.
    """
    principal.require(Permission.WRITE)
    kind = catalog.kind_for_type(type)
    foreign = sorted(set(kind_fields) - kind.create_fields)
    if foreign:
        raise ApiError(422, f"a {kind.kind} memory does not take: {', '.join(foreign)}")
    fields: dict[str, Any] = {
        "name": name,
        "description": description,
        "labels": list(labels),
        "guide": guide,
    }
    if always_load is not None:
        fields["always_load"] = _kind_always_load(kind, always_load)
    with transaction.atomic():
        fields.update(kind.prepare_create(principal, {"type": type, **kind_fields}))
        try:
            with transaction.atomic():
                memory = Memory.objects.create(
                    workspace=principal.workspace, kind=kind.kind, type=type, **fields
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


def list_memories(principal: Principal) -> QuerySet[Memory]:
    """The workspace's memories, newest first (``memoryhub.api.filters`` narrows them)."""
    principal.require(Permission.READ)
    qs = Memory.objects.filter(workspace_id=principal.workspace_id)
    return qs.order_by("-created_at", "id")


class MemoryChanges(TypedDict, total=False):
    name: str
    description: str
    labels: list[str]
    guide: str | None
    always_load: list[str]


def update(
    principal: Principal, memory_id: str, if_match: str, **changes: Unpack[MemoryChanges]
) -> Memory:
    """Change the given checked fields (compare-and-set on ``if_match``); ``always_load``
    must apply to the memory's kind and follow its rules."""
    principal.require(Permission.WRITE)
    with transaction.atomic():
        memory = get_in_workspace(Memory.objects.all(), principal, memory_id, "memory", lock=True)
        if "always_load" in changes:
            kind = _kind_of_memory(memory)
            changes["always_load"] = _kind_always_load(kind, changes["always_load"])
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
