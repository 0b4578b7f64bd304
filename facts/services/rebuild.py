"""Recomputing the folded search text of stored facts (after a change to ``search.fold``).

One batch of facts at a time, in id order, each in its own short transaction that locks
only that batch's rows: writers keep working, and a stopped run resumes after the last id
it finished. The term statistics follow each changed row through the facts triggers.
The ``rebuild_search`` command and the migration that brought a new folding
(``facts/migrations/0010_accent_folding``) both run it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from django.db import transaction

from facts import search
from facts.models import Fact


@dataclass(frozen=True)
class Batch:
    last_id: int | None  # the last fact id looked at; None when there were no more
    seen: int
    changed: int


def refold_batch(after_id: int | None, size: int = 500) -> Batch:
    """Refold the next ``size`` facts after ``after_id``; rows already right are left alone."""
    with transaction.atomic():
        rows = Fact.objects.order_by("id").only("id", "text", "search_text")
        if after_id is not None:
            rows = rows.filter(id__gt=after_id)
        batch = list(rows.select_for_update(no_key=True)[:size])
        stale = []
        for fact in batch:
            folded = search.fold(fact.text)
            if fact.search_text != folded:
                fact.search_text = folded
                stale.append(fact)
        Fact.objects.bulk_update(stale, ["search_text"])
    return Batch(batch[-1].id if batch else None, len(batch), len(stale))


def refold_all(after_id: int | None = None, size: int = 500) -> Iterator[Batch]:
    """Refold every fact after ``after_id``, batch by batch; yields each batch done."""
    while (done := refold_batch(after_id, size)).last_id is not None:
        after_id = done.last_id
        yield done
