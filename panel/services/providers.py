"""What the panel shows of memory providers beyond the API's answers, and the edit form's
"blank keeps the stored key" over the API's whole-credential replace (on the same server
only: a new address needs its keys typed again, as the API's rule says)."""

from __future__ import annotations

from django.db.models import Count, QuerySet

from memoryhub.errors import ApiError
from memoryhub.models import Memory, MemoryProvider
from records.services import providers


def with_memory_counts(rows: QuerySet[MemoryProvider]) -> QuerySet[MemoryProvider]:
    """Each provider with how many record memories use it (one query for a page)."""
    return rows.annotate(memory_count=Count("memories", distinct=True))


def memories_using(provider: MemoryProvider) -> int:
    return Memory.objects.filter(provider=provider).count()


def kept_credential(
    provider: MemoryProvider, typed: dict[str, str], config: dict | None = None
) -> dict[str, str]:
    """The credential to store: the stored keys, each replaced by the one typed for it.

    The API replaces the whole credential; a form leaves a key it does not show blank, so
    typing only a new admin key keeps the stored api key. With a new config that moves
    the provider to another server (``providers.moves_address``) only the typed keys go:
    the stored ones are never sent to another address. A stored credential that cannot be
    decrypted is lost already: the typed keys replace it. Never shown, never logged.
    """
    if config is not None and providers.moves_address(provider, config):
        return typed
    try:
        stored = providers.credential_of(provider) or {}
    except ApiError:
        stored = {}
    return {**stored, **typed}
