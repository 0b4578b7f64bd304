"""What the panel shows of memory providers beyond the API's answers. (The edit form's
"blank keeps the stored key" is the service's ``credential_keys`` change, merged under the
row's lock: records.services.providers.)"""

from __future__ import annotations

import re

from django.db.models import Count, QuerySet

from memoryhub.errors import ApiError
from memoryhub.models import Memory, MemoryProvider

_ONE_ETAG = re.compile(r'"[0-9]+"')


def with_memory_counts(rows: QuerySet[MemoryProvider]) -> QuerySet[MemoryProvider]:
    """Each provider with how many record memories use it (one query for a page)."""
    return rows.annotate(memory_count=Count("memories", distinct=True))


def memories_using(provider: MemoryProvider) -> int:
    return Memory.objects.filter(provider=provider).count()


def form_etag(posted: str) -> str:
    """The ETag a provider form was read at, for If-Match: exactly one version.

    The form always carries the one it was rendered with. ``*`` (any version) or a list
    would let a form decided on one state of the provider change another, for example
    keep the stored keys of a provider moved meanwhile; the API's callers may still send
    them, a form never does.
    """
    etag = posted.strip()
    if not _ONE_ETAG.fullmatch(etag):
        raise ApiError(
            412, 'the form must carry the one version it was read at (an ETag such as "3")'
        )
    return etag
