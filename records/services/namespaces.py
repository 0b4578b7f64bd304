"""Who owns a namespace: at most one memory per backend, across all workspaces.

A backend is a provider type and a normalised base_url (:func:`providers.backend_key`).
Workspaces may point providers at the same mem0 server, so a namespace checked only
against one provider row could be adopted, read and purged from another workspace.

Checks and the writes they guard are serialised with PostgreSQL transaction-level
advisory locks, held until the caller's transaction ends:

- a shared lock on the backend and an exclusive lock on (backend, namespace) for one
  namespace (adopting it, enqueueing or running its purge);
- an exclusive lock on the backend for moving a provider onto it with all its namespaces.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from django.db import connection

from memoryhub.errors import ApiError
from memoryhub.models import Memory, MemoryProvider
from memoryhub.reasons import Code, Reason
from records.models import PurgeJob
from records.services.providers import backend_key, providers_on_backend


def key_of(provider: MemoryProvider) -> str:
    return backend_key(provider.type, provider.config)


def _lock_id(*parts: str) -> int:
    """A stable signed 64-bit id for pg_advisory_*; a rare collision only serialises more."""
    digest = hashlib.sha256("\0".join(("memoryhub.namespace", *parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def lock(key: str, namespace: str) -> None:
    """Serialise everything that checks and then claims or purges this namespace."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock_shared(%s)", [_lock_id(key)])
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_lock_id(key, namespace)])


def lock_backend(key: str) -> None:
    """Exclusive on the whole backend: waits for and holds off every namespace lock on it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_lock_id(key)])


def in_use(key: str, namespaces: Iterable[str], *, provider_ids: list[str] | None = None) -> bool:
    """Whether a live memory of any workspace on the backend uses one of these namespaces."""
    ids = providers_on_backend(key) if provider_ids is None else provider_ids
    return Memory.objects.filter(provider_id__in=ids, namespace__in=list(namespaces)).exists()


def refuse_taken(key: str, namespaces: Iterable[str]) -> None:
    """409 when a live memory or a pending purge on the backend has one of the namespaces.

    The caller holds :func:`lock` or :func:`lock_backend`. The messages name no workspace:
    the holder may be another tenant.
    """
    namespaces = list(namespaces)
    ids = providers_on_backend(key)
    if in_use(key, namespaces, provider_ids=ids):
        raise ApiError(409, "another memory uses this namespace", code=Code.ALREADY_EXISTS)
    if PurgeJob.objects.filter(
        provider_id__in=ids, namespace__in=namespaces, status=PurgeJob.Status.PENDING
    ).exists():
        raise ApiError(
            409,
            "the records of a deleted memory in this namespace are still being purged",
            reason=Reason.NAMESPACE_PURGING,
        )
