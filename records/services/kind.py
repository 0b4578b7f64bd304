"""What the memory catalog asks of record memories: checks on create, and the purge on delete."""

from __future__ import annotations

import hashlib
from typing import Any

from django.db import transaction

from memoryhub import ids
from memoryhub.catalog import MemoryKind
from memoryhub.errors import ApiError
from memoryhub.models import Memory, MemoryProvider
from memoryhub.principals import Principal
from records.services import purges
from records.services.providers import require_enabled

NAMESPACE_PREFIX = "a13n-"
MAX_NAMESPACE = 256


def default_namespace(memory_id: str) -> str:
    """``a13n-`` and 32 hex characters derived from the memory's id."""
    return NAMESPACE_PREFIX + hashlib.sha256(memory_id.encode()).hexdigest()[:32]


def validate_namespace(value: Any) -> str:
    if (
        not isinstance(value, str)
        or not 1 <= len(value) <= MAX_NAMESPACE
        or not value.isprintable()
        or any(c.isspace() for c in value)
        or "*" in value
    ):
        raise ApiError(
            422, "namespace is 1 to 256 printable characters with no whitespace and no *"
        )
    return value


def _provider(principal: Principal, data: dict) -> MemoryProvider:
    provider_id = data.get("provider_id")
    if provider_id is None:
        raise ApiError(422, "a record memory needs provider_id")
    provider = (
        MemoryProvider.objects.select_for_update()
        .filter(workspace_id=principal.workspace_id, pk=provider_id)
        .first()
        if isinstance(provider_id, str)
        else None
    )
    if provider is None:
        raise ApiError(422, "provider_id names no memory provider of this workspace")
    if provider.type != data.get("type"):
        raise ApiError(422, f"type must be the provider's type, {provider.type}")
    require_enabled(provider)
    return provider


def prepare_create(principal: Principal, data: dict) -> dict:
    """The provider and namespace of a new record memory (and its id, which names it)."""
    memory_id = ids.new_memory_id()
    explicit = data.get("namespace")
    namespace = default_namespace(memory_id) if explicit is None else validate_namespace(explicit)
    # The provider's row lock orders this check against deletions that start a purge.
    with transaction.atomic():
        provider = _provider(principal, data)
        if Memory.objects.filter(provider=provider, namespace=namespace).exists():
            raise ApiError(409, "another memory uses this namespace", code="already_exists")
        if purges.is_purging(provider, namespace):
            raise ApiError(
                409,
                "the records of a deleted memory in this namespace are still being purged",
                reason="namespace_purging",
            )
    return {"id": memory_id, "provider": provider, "namespace": namespace}


def on_delete(principal: Principal, memory: Memory) -> None:
    """Inside the delete transaction: the purge's outbox row; its task runs on commit."""
    if memory.provider_id is None or not memory.namespace:
        return
    MemoryProvider.objects.select_for_update().filter(pk=memory.provider_id).first()
    purges.enqueue_purge(principal, memory)


RECORD_KIND = MemoryKind(
    kind="record",
    types={t.value for t in MemoryProvider.Type},
    prepare_create=prepare_create,
    create_fields={"provider_id", "namespace"},
    on_delete=on_delete,
    always_load=False,
)
