"""What the memory catalog asks of record memories: checks on create, and the purge on delete."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils.crypto import salted_hmac

from memoryhub import ids
from memoryhub.catalog import MemoryKind
from memoryhub.errors import ApiError
from memoryhub.models import MAX_NAMESPACE, Memory, MemoryProvider
from memoryhub.principals import Principal
from records.services import namespaces, purges
from records.services.providers import require_enabled

NAMESPACE_PREFIX = "a13n-"
# Names the HMAC key derived from SECRET_KEY for default namespaces, and nothing else.
DEFAULT_NAMESPACE_SALT = "memoryhub.records.default_namespace"


def default_namespace(memory_id: str) -> str:
    """``a13n-`` and 32 hex characters of an HMAC-SHA256 of the memory's id.

    Keyed by a secret derived from SECRET_KEY, so no one can compute another memory's
    namespace from its public id. Computed once, on create: the row keeps it (a new
    SECRET_KEY changes only future defaults).
    """
    digest = salted_hmac(DEFAULT_NAMESPACE_SALT, memory_id, algorithm="sha256").hexdigest()
    return NAMESPACE_PREFIX + digest[:32]


def validate_namespace(value: Any) -> str:
    if (
        not isinstance(value, str)
        or not 1 <= len(value) <= MAX_NAMESPACE
        or not value.isprintable()
        or any(c.isspace() for c in value)
        or "*" in value
    ):
        raise ApiError(
            422,
            f"namespace is 1 to {MAX_NAMESPACE} printable characters with no whitespace and no *",
        )
    if value.startswith(NAMESPACE_PREFIX):
        # memoryhub's own defaults: those made before they were keyed can be computed from
        # a memory id, and a backend reached by another name (an IP address, a DNS alias)
        # has another key, so no one may adopt one explicitly.
        raise ApiError(
            422, f"namespaces starting with {NAMESPACE_PREFIX} are memoryhub's own defaults"
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
    with transaction.atomic():
        provider = _provider(principal, data)
        # Held until the caller's transaction (create_memory's) commits the new row: the
        # check and the INSERT are one step for every workspace on this backend.
        key = namespaces.key_of(provider)
        namespaces.lock(key, namespace)
        namespaces.refuse_taken(key, [namespace])
    return {"id": memory_id, "provider": provider, "namespace": namespace}


def on_delete(principal: Principal, memory: Memory) -> None:
    """Inside the delete transaction: the purge's outbox row; its task runs on commit."""
    if memory.provider_id is None or not memory.namespace:
        return
    provider = MemoryProvider.objects.select_for_update().filter(pk=memory.provider_id).first()
    # Orders the pending purge against adoptions of the namespace on the same backend.
    namespaces.lock(namespaces.key_of(provider), memory.namespace)
    purges.enqueue_purge(principal, memory)


RECORD_KIND = MemoryKind(
    kind="record",
    types={t.value for t in MemoryProvider.Type},
    prepare_create=prepare_create,
    create_fields={"provider_id", "namespace"},
    on_delete=on_delete,
    always_load=False,
)
