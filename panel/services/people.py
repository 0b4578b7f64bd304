"""What the panel shows of end users: their facts and threads, counted a page at a time."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Count

from facts.models import Fact
from memoryhub.models import EndUser


def fact_counts(end_users: Sequence[EndUser]) -> dict[str, int]:
    """Facts in each person's folders, every agent's real memory (one query for a page)."""
    rows = (
        Fact.objects.filter(owner_id__in=[u.id for u in end_users], scope="")
        .values("owner_id")
        .annotate(n=Count("id"))
        .order_by()
    )
    return {row["owner_id"]: row["n"] for row in rows}


def with_thread_counts(end_users):
    return end_users.annotate(thread_count=Count("threads", distinct=True))
