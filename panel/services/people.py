"""What the panel shows of end users: their counts, and exactly what erasing one removes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Count, Q

from facts.models import Fact, FactVersion
from memoryhub.models import EndUser, Run, Thread


@dataclass(frozen=True)
class Erasure:
    """What erasing a person takes (``memoryhub.services.end_users.erase_end_user``)."""

    facts: int  # in their users/<id>/ folders, in every agent's memory and eval memory
    versions: int  # of those facts
    threads: int  # archived, and no longer linked to them
    run_inputs: int  # runs with what they said, or a memory context they were given: cleared


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


def erasure_of(end_user: EndUser) -> Erasure:
    """Counted as the erase service would remove it, just before it does."""
    facts = Fact.objects.filter(workspace_id=end_user.workspace_id, owner_id=end_user.id)
    return Erasure(
        facts=facts.count(),
        versions=FactVersion.objects.filter(
            workspace_id=end_user.workspace_id, fact__in=facts.values("id")
        ).count(),
        threads=Thread.objects.filter(end_user=end_user).count(),
        run_inputs=Run.objects.filter(end_user=end_user)
        .filter(Q(input__isnull=False) | Q(context__gt=""))
        .count(),
    )
