"""What the panel shows of a file memory beyond the API's answers: the folder tree, the
revision before each revision (for its diff), the version an edit started from, and what
purging history takes. Reads only; every change goes through filememory's services."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Count, Sum

from filememory.models import File, Revision
from filememory.representations import names_file
from filememory.services.files import parse_etags
from memoryhub.models import Memory
from panel import trees
from panel.trees import FolderRow


def folder_tree(memory: Memory) -> tuple[list[FolderRow], bool]:
    """The tree of folders holding files, counted; one query: the files' paths."""
    paths = File.objects.filter(memory=memory).values_list("path", flat=True)
    return trees.folder_tree((path, 1) for path in paths)


def contents_with_older(revisions: Sequence[Revision]) -> dict[int, str | None]:
    """The content of each revision of one path's history page (newest first) and of the
    revision just older than the page (one query), by revision id."""
    if not revisions:
        return {}
    newest = revisions[0]
    rows = (
        Revision.objects.filter(memory_id=newest.memory_id, path=newest.path, id__lte=newest.id)
        .order_by("-id")
        .values_list("id", "content")[: len(revisions) + 1]
    )
    return dict(rows)


def revision_before(revision: Revision) -> Revision | None:
    """The change of the same path just before this one, if history still keeps it."""
    return (
        Revision.objects.filter(
            memory_id=revision.memory_id, path=revision.path, id__lt=revision.id
        )
        .order_by("-id")
        .first()
    )


def started_from(memory: Memory, path: str, etag: str, current: File | None) -> str | None:
    """The content of the version an edit started from (named by the ETag the form
    carried), when it is still the same file and its history still keeps that version."""
    tags = parse_etags(etag) if etag else []
    if current is None or not tags or not names_file(tags[0][0], current):
        return None
    revision = (
        Revision.objects.filter(memory=memory, path=path, file_id=current.id, version=tags[0][1])
        .exclude(content=None)
        .order_by("-id")
        .first()
    )
    return revision.content if revision else None


@dataclass(frozen=True)
class HistoryShare:
    revisions: int
    bytes: int


def history_of(memory: Memory, path: str | None) -> HistoryShare:
    """What purging one path's history (or the memory's) deletes."""
    qs = Revision.objects.filter(memory=memory)
    if path is not None:
        qs = qs.filter(path=path)
    found = qs.aggregate(n=Count("id"), size=Sum("size"))
    return HistoryShare(found["n"], found["size"] or 0)
