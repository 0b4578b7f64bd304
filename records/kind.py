"""What record memories contribute (``memoryhub.catalog.MemoryKind``): checks on create,
the purge on delete, the record tools of a run and its recalled context."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.utils.crypto import salted_hmac

from memoryhub import ids
from memoryhub.catalog import MemoryKind, Mount
from memoryhub.errors import ApiError
from memoryhub.models import MAX_NAMESPACE, Memory, MemoryProvider, Run
from memoryhub.principals import Principal
from memoryhub.tools import RECORD_TOOL_KEYS, Tool
from records.context import recall_many
from records.services import health, namespaces, purges
from records.services.providers import require_enabled
from records.tools import READ_KEYS, run_record_tool, tool

logger = logging.getLogger(__name__)

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
        # Held until the caller's transaction (memories.create's) commits the new row: the
        # check and the INSERT are one step for every workspace on this backend.
        key = namespaces.key_of(provider)
        namespaces.lock(key, namespace)
        namespaces.refuse_taken(key, [namespace])
    return {"id": memory_id, "provider": provider, "namespace": namespace}


def on_delete(principal: Principal, memory: Memory) -> None:
    """Inside the delete transaction: the purge's outbox row; its task runs on commit."""
    if memory.provider_id is None or not memory.namespace:
        return
    provider = MemoryProvider.objects.select_for_update().get(pk=memory.provider_id)
    # Orders the pending purge against adoptions of the namespace on the same backend.
    namespaces.lock(namespaces.key_of(provider), memory.namespace)
    purges.enqueue_purge(principal, memory)


def tools(mounts: Sequence[Mount], disabled: set[str]) -> list[Tool]:
    """With several record mounts, each tool takes ``memory``: the mounts it may reach."""
    found = []
    for key in RECORD_TOOL_KEYS:
        names = [m.name for m in mounts if RECORD_KIND.tool_allowed(key, m.access)]
        if key not in disabled and names:
            found.append(tool(key, names if len(mounts) > 1 else None))
    return found


def run_tool(
    principal: Principal,
    mount: Mount,
    tool: Tool,
    arguments: dict,
    *,
    run: Run,
    tool_call_id: str,
) -> str:
    return run_record_tool(
        principal,
        mount.memory_id,
        tool,
        arguments,
        run_id=run.id,
        tool_call_id=tool_call_id,
        access=mount.access,
    )


def _run_query(run_input: object) -> str:
    """What recall searches for: the run's input, as text."""
    if isinstance(run_input, str):
        return run_input
    return "" if run_input is None else json.dumps(run_input, ensure_ascii=False)


def prefetch_context(run: Run, mounts: Sequence[Mount]) -> dict[str, str]:
    """The recalled block of each mount with recall on, searched all at once."""
    wanted = [m for m in mounts if m.recall]
    if not wanted:
        return {}
    memories = list(
        Memory.objects.select_related("provider").filter(pk__in=[m.memory_id for m in wanted])
    )
    return recall_many(memories, _run_query(run.input), {m.memory_id: m.name for m in wanted})


def context_block(
    run: Run, mount: Mount, *, budget_bytes: int, prefetched: dict[str, str], **_: Any
) -> str:
    """The recalled block, whole or not at all: a cut list of records would mislead."""
    block = prefetched.get(mount.memory_id, "")
    if len(block.encode("utf-8")) > budget_bytes:
        logger.info("run %s: recall of %s left out (over budget)", run.id, mount.name)
        return ""
    return block


RECORD_KIND = MemoryKind(
    kind="record",
    types={t.value for t in MemoryProvider.Type},
    prepare_create=prepare_create,
    create_fields={"provider_id", "namespace"},
    on_delete=on_delete,
    always_load=False,
    tool_keys=tuple(RECORD_TOOL_KEYS),
    read_tool_keys=frozenset(READ_KEYS),
    tools=tools,
    run_tool=run_tool,
    tools_in_database=False,  # a backend call: a lost answer is "outcome unknown", not redone
    prefetch_context=prefetch_context,
    context_block=context_block,
    health=health.check,
)
