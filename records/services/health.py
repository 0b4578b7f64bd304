"""Which memory providers stopped answering: every record call notes its outcome here, and
``/healthz`` reports the providers whose failure is recent.

The state is in the database, so every web process and worker sees what any of them saw.
A provider failing is not the service failing: one workspace's mem0 being down leaves
facts, files and every other workspace working, so ``/healthz`` stays 200 and says
``degraded``.
"""

from __future__ import annotations

import logging
from contextlib import nullcontext
from datetime import timedelta
from typing import TypeGuard

from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from memoryhub.errors import ApiError
from memoryhub.models import MemoryProvider
from memoryhub.reasons import Reason
from records.models import ProviderOutage

logger = logging.getLogger(__name__)

# A failure older than this is not reported: nothing has called the provider since.
RECENT = timedelta(seconds=60)


def _is_outage(error: ApiError | None) -> TypeGuard[ApiError]:
    """A failure of the provider itself (not our outbound policy, not a 404 it answered)."""
    if error is None or not str(error.extra.get("dependency", "")).startswith("memory:"):
        return False
    return error.reason != Reason.OUTBOUND_REFUSED


def note(provider: MemoryProvider, error: ApiError | None) -> None:
    """Notes how a call to ``provider`` ended: ``error`` None (or not the provider's) means
    it answered. Never raises: noting is not worth failing the call's own answer."""
    # One statement; a savepoint only inside a caller's transaction, which a failed
    # statement would otherwise abort.
    guard = transaction.atomic() if connection.in_atomic_block else nullcontext()
    try:
        with guard:
            if _is_outage(error):
                _failed(provider, error)
            else:
                ProviderOutage.objects.filter(provider=provider).delete()
    except DatabaseError as exc:
        logger.warning("provider %s: its outcome was not noted: %s", provider.id, exc)


def _failed(provider: MemoryProvider, error: ApiError) -> None:
    """Inserts the outage, or updates it keeping its ``since``."""
    now = timezone.now()
    outage = ProviderOutage(
        provider=provider,
        dependency=error.extra["dependency"],
        reason=error.message[:500],
        since=now,
        last_failed_at=now,
    )
    ProviderOutage.objects.bulk_create(
        [outage],
        update_conflicts=True,
        unique_fields=["provider"],
        update_fields=["dependency", "reason", "last_failed_at"],
    )


def check() -> str:
    """``ok``, or which kinds of provider failed recently and how many (no ids: ``/healthz``
    is public, and provider ids belong to their workspaces)."""
    recent = ProviderOutage.objects.filter(last_failed_at__gte=timezone.now() - RECENT)
    failing = list(recent.values_list("dependency", flat=True))
    if not failing:
        return "ok"
    count, kinds = len(failing), sorted(set(failing))
    plural = "s" if count != 1 else ""
    return (
        f"error: {count} provider{plural} did not answer in the last"
        f" {int(RECENT.total_seconds())} s ({', '.join(kinds)})"
    )
