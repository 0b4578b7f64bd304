"""A memory's history: listing revisions, reading one, restoring one, purging."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.db.models import F, Q, QuerySet, Sum, Window
from django.db.models.functions import RowNumber

from filememory.models import File, Revision
from filememory.services.files import audit_change, base_from_if_match, get_file_memory
from filememory.services.writes import Actor, content_size, lock_memory, writing
from memoryhub import audit
from memoryhub.errors import ApiError
from memoryhub.models import Memory, Permission
from memoryhub.principals import Principal


def list_revisions(principal: Principal, memory_id: str) -> QuerySet:
    """The memory's revisions, newest first (filememory/filters.py narrows them to a path)."""
    memory = get_file_memory(principal, memory_id)
    return Revision.objects.filter(memory=memory).defer("content").order_by("-id")


def get_revision(principal: Principal, memory_id: str, revision_id: str) -> Revision:
    memory = get_file_memory(principal, memory_id)
    revision = Revision.objects.filter(memory=memory, public_id=revision_id).first()
    if revision is None:
        raise ApiError(404, "revision not found")
    return revision


def restore_revision(actor: Actor, memory_id: str, revision_id: str, if_match: str | None) -> File:
    """Write an old revision's content to its path as a new change.

    With If-Match the restore is a compare-and-set on that ETag; without it, it replaces
    whatever version is current (or creates the file again). The revision's content must
    fit today's ``memory.max_file_bytes`` (the limit may have been lowered since).
    """
    with writing(actor, memory_id) as writer:
        revision = Revision.objects.filter(memory=writer.memory, public_id=revision_id).first()
        if revision is None:
            raise ApiError(404, "revision not found")
        if revision.content is None:
            raise ApiError(422, "this revision deleted the file; it has no content to restore")
        current = writer.current(revision.path)
        if if_match is None and current is not None:
            if_match = "*"
        base = base_from_if_match(if_match, current, revision.path)
        content_size(revision.content)
        file = writer.put(
            revision.path,
            revision.content,
            base,
            Revision.Action.RESTORE,
            restored_from=revision.public_id,
        )
        audit_change(
            writer, "file.restore", revision.path, version=file.version, revision=revision_id
        )
    return file


def purge_history(principal: Principal, memory_id: str, path: str | None = None) -> int:
    """Delete one path's revisions (``path`` comes checked), or the whole memory's."""
    principal.require(Permission.WRITE)
    with transaction.atomic():
        memory = lock_memory(principal, memory_id)
        qs = Revision.objects.filter(memory=memory)
        if path is not None:
            qs = qs.filter(path=path)
        freed = qs.aggregate(total=Sum("size"))["total"] or 0
        deleted, _ = qs.delete()
        Memory.objects.filter(pk=memory.pk).update(history_bytes=memory.history_bytes - freed)
        target = f"{memory.id}:{path}" if path is not None else memory.id
        audit.record(
            principal, "history.purge", "file" if path else "memory", target, revisions=deleted
        )
    return deleted


def prune_history(
    principal: Principal,
    memory_id: str,
    *,
    keep: int | None = None,
    before: datetime | None = None,
) -> tuple[int, int]:
    """Drop revisions beyond the newest ``keep`` of each path, and/or older than ``before``.

    The operators' trim of a memory's history (``manage.py prune_history``); the files
    themselves are untouched. Answers (revisions deleted, bytes freed).
    """
    principal.require(Permission.WRITE)
    with transaction.atomic():
        memory = lock_memory(principal, memory_id)
        rows = Revision.objects.filter(memory=memory)
        doomed = Q(pk__in=[])
        if keep is not None:
            newest = Window(RowNumber(), partition_by=[F("path")], order_by=F("id").desc())
            ranked = rows.annotate(rank=newest).filter(rank__gt=keep).values("id")
            doomed |= Q(pk__in=list(ranked.values_list("id", flat=True)))
        if before is not None:
            doomed |= Q(created_at__lt=before)
        gone = rows.filter(doomed)
        freed = gone.aggregate(total=Sum("size"))["total"] or 0
        deleted, _ = gone.delete()
        Memory.objects.filter(pk=memory.pk).update(history_bytes=F("history_bytes") - freed)
        if deleted:
            audit.record(principal, "history.prune", "memory", memory.id, revisions=deleted)
    return deleted, freed
