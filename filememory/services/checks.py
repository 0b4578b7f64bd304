"""Checks of what the file-memory limits depend on, and repairs of the byte counters."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery, Sum, Value
from django.db.models.functions import Coalesce

from filememory.models import File, Revision
from memoryhub.checks import Difference
from memoryhub.conf import setting
from memoryhub.models import Memory

COUNTERS = ("file_count", "content_bytes", "history_bytes")


def _sum(model: type[File] | type[Revision], field: str | None) -> Coalesce:
    """One memory's count (field None) or sum of ``field``, as a subquery."""
    rows = model.objects.filter(memory=OuterRef("pk")).order_by().values("memory")
    total = rows.annotate(v=Count("pk") if field is None else Sum(field)).values("v")
    return Coalesce(Subquery(total, output_field=IntegerField()), Value(0))


def _with_real(memories: QuerySet[Memory]) -> QuerySet[Memory]:
    return memories.annotate(
        real_file_count=_sum(File, None),
        real_content_bytes=_sum(File, "size"),
        real_history_bytes=_sum(Revision, "size"),
    )


def counter_differences() -> list[Difference]:
    """Each file memory's counters (the limits read them) against its files and revisions."""
    found = []
    for memory in _with_real(Memory.objects.filter(kind="file")).order_by("id"):
        for name in COUNTERS:
            stored, real = getattr(memory, name), getattr(memory, f"real_{name}")
            if stored != real:
                found.append(Difference(name, memory.id, stored, real, True))
    return found


def repair_counters() -> int:
    """Recount under the memory's row lock, which every writer takes; memories mended."""
    ids = sorted({difference.object for difference in counter_differences()})
    for memory_id in ids:
        with transaction.atomic():
            Memory.objects.select_for_update().filter(pk=memory_id).first()
            real = _with_real(Memory.objects.filter(pk=memory_id)).values(
                *(f"real_{name}" for name in COUNTERS)
            )[0]
            Memory.objects.filter(pk=memory_id).update(
                **{name: real[f"real_{name}"] for name in COUNTERS}
            )
    return len(ids)


def revision_differences() -> list[Difference]:
    """Paths with more revisions than ``memory.revisions_per_file`` (prune_history trims)."""
    limit = setting("memory.revisions_per_file")
    rows = (
        Revision.objects.values("memory_id", "path")
        .annotate(n=Count("id"))
        .filter(n__gt=limit)
        .order_by("memory_id", "path")
    )
    where = "{memory_id}:{path}"
    return [
        Difference("revisions_per_file", where.format(**row), row["n"], limit, False)
        for row in rows
    ]
