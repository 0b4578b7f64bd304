"""What the panel shows of end users: their facts and threads, counted a page at a time."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Count, QuerySet

from facts.models import Fact
from memoryhub.models import EndUser


def fact_counts(end_users: Iterable[EndUser]) -> dict[str, int]:
    """Facts in each person's folders, every agent's real memory (one query for a page)."""
    rows = (
        Fact.objects.filter(owner_id__in=[u.id for u in end_users], scope="")
        .values("owner_id")
        .annotate(n=Count("id"))
        .order_by()
    )
    return {row["owner_id"]: row["n"] for row in rows if row["owner_id"] is not None}


def with_thread_counts(end_users: QuerySet[EndUser]) -> QuerySet[EndUser]:
    return end_users.annotate(thread_count=Count("threads", distinct=True))
