"""What each conversation (thread) has seen of a file memory.

A tool write is based on the version of the file the conversation last saw (through the
context block, ``view``, or its own write), never on whatever is current: a write over a
version it has not seen fails and returns the current file.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.utils import timezone

from filememory.models import File, SeenFile, Sighting
from filememory.services.writes import ABSENT, Base, stale
from memoryhub.models import Memory


@dataclass(frozen=True)
class Seen:
    path: str
    file_id: int
    known_version: int
    seen_version: int | None


def lookup(thread_id: str, memory: Memory, path: str) -> SeenFile | None:
    return SeenFile.objects.filter(thread_id=thread_id, memory=memory, path=path).first()


def lookup_all(thread_id: str, memory: Memory) -> dict[str, SeenFile]:
    rows = SeenFile.objects.filter(thread_id=thread_id, memory=memory)
    return {row.path: row for row in rows}


def base_for(seen: SeenFile | None, current: File | None, path: str) -> Base:
    """The base of a write from a conversation; 412 when it has not seen the current file."""
    if seen is None or seen.seen_version is None:
        if current is None:
            return ABSENT
        raise stale(
            path,
            current,
            f"{path} exists (version {current.version}) and this conversation has not read it yet",
        )
    return Base(seen.file_id, seen.seen_version)


def record(thread_id: str, memory: Memory, entries: Iterable[Seen]) -> None:
    rows = [
        SeenFile(
            workspace_id=memory.workspace_id,
            thread_id=thread_id,
            memory=memory,
            path=e.path,
            file_id=e.file_id,
            known_version=e.known_version,
            seen_version=e.seen_version,
        )
        for e in entries
    ]
    if rows:
        SeenFile.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["thread", "memory", "path"],
            update_fields=["file_id", "known_version", "seen_version"],
        )


def saw(thread_id: str, memory: Memory, file: File) -> None:
    """The conversation has the content of this version of the file."""
    record(thread_id, memory, [Seen(file.path, file.id, file.version, file.version)])


def forget(thread_id: str, memory: Memory, paths: Iterable[str]) -> None:
    """The conversation knows these paths hold no file now."""
    SeenFile.objects.filter(thread_id=thread_id, memory=memory, path__in=list(paths)).delete()


def reset(thread_id: str, memory: Memory) -> None:
    """Forget everything (first sight, or the conversation's history was compacted)."""
    SeenFile.objects.filter(thread_id=thread_id, memory=memory).delete()


def sighting(thread_id: str, memory: Memory) -> Sighting | None:
    return Sighting.objects.filter(thread_id=thread_id, memory=memory).first()


def sighted(thread_id: str, memory: Memory, *, full: bool) -> None:
    now = timezone.now()
    fields = {"updated_at": now, "memory_version": memory.version}
    if full:
        fields["full_at"] = now
    Sighting.objects.update_or_create(
        thread_id=thread_id,
        memory=memory,
        defaults=fields,
        create_defaults={**fields, "full_at": now, "workspace_id": memory.workspace_id},
    )
