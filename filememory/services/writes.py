"""The one way files change: a compare-and-set on the file's version, with byte accounting.

A write transaction first locks the memory's row (``SELECT ... FOR UPDATE``). The row holds
the memory's ``content_bytes``, ``history_bytes`` and ``file_count``, so concurrent writers
of one memory take turns on the accounting and can never overshoot
``memory.max_total_bytes``. Each file change itself is ``UPDATE/DELETE ... WHERE id = %s
AND version = %s`` (an ``INSERT`` for a new file, which the unique path index guards): when
no row matches, the write was based on stale content and answers 412 with the current file.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from filememory.models import File, Revision
from filememory.representations import file_etag, file_json
from memoryhub.conf import setting
from memoryhub.errors import ApiError
from memoryhub.models import Memory, Permission
from memoryhub.principals import Principal
from memoryhub.reasons import Reason
from memoryhub.rules import Rule

FILE_MEMORIES = Memory.objects.filter(kind=Memory.Kind.FILE)


@dataclass(frozen=True)
class Actor:
    """Who changes a file: the principal, and for a model's tool call its run and call id."""

    principal: Principal
    run_id: str | None = None
    tool_call_id: str | None = None


@dataclass(frozen=True)
class Base:
    """What a write is based on: no file at all (create only), or one version of one file."""

    file_id: int | None = None
    version: int | None = None

    @property
    def absent(self) -> bool:
        return self.file_id is None

    @classmethod
    def of(cls, file: File) -> Base:
        return cls(file.id, file.version)

    def known(self) -> tuple[int, int]:
        """The file and version of a base that is not absent (the caller checked)."""
        assert self.file_id is not None and self.version is not None
        return self.file_id, self.version


ABSENT = Base()


def content_size(content: object, field: str = "content") -> int:
    """UTF-8 bytes of file content; 422 beyond ``memory.max_file_bytes`` or for non-text."""
    if not isinstance(content, str):
        raise ApiError(422, f"{field} must be a string")
    try:
        size = len(content.encode("utf-8"))
    except UnicodeEncodeError:
        raise ApiError(422, f"{field} is not valid Unicode text") from None
    limit = setting("memory.max_file_bytes")
    if size > limit:
        raise ApiError(
            422,
            f"{field} is {size} bytes; a file holds at most {limit} bytes (UTF-8)",
            reason=Reason.FILE_TOO_LARGE,
        )
    return size


def clean_content(value: Any, field: str = "content") -> str:
    """File content: text of at most ``memory.max_file_bytes`` UTF-8 bytes (content_size)."""
    content_size(value, field)  # 422 unless text
    return str(value)


# A file's whole content. Its limit counts UTF-8 bytes, and the setting can change, so the
# schema cannot state it: the operation's description names it.
CONTENT = Rule(clean_content, {"type": "string"})


def utf8_size(content: str) -> int:
    """UTF-8 bytes of content already checked (by CONTENT, content_size or the database)."""
    return len(content.encode("utf-8"))


def stale(path: str, current: File | None, message: str | None = None) -> ApiError:
    """412 with the current file (or null when there is none now)."""
    if message is None:
        now = f"now at version {current.version}" if current else "it does not exist now"
        message = f"{path} changed since this write's version was read ({now})"
    extra: dict[str, Any] = {"current": file_json(current) if current else None}
    if current is not None:
        extra["etag"] = file_etag(current)
    return ApiError(412, message, **extra)


def memory_gone(memory_id: str, deleted_reason: Reason | None) -> ApiError:
    if deleted_reason:
        return ApiError(404, f"memory {memory_id} was deleted", reason=deleted_reason)
    return ApiError(404, "memory not found")


def lock_memory(
    principal: Principal, memory_id: str, deleted_reason: Reason | None = None
) -> Memory:
    memory = (
        FILE_MEMORIES.select_for_update()
        .filter(workspace_id=principal.workspace_id, pk=memory_id)
        .first()
    )
    if memory is None:
        raise memory_gone(memory_id, deleted_reason)
    return memory


@dataclass
class Writer:
    """The changes of one transaction on one locked memory, and their byte accounting."""

    memory: Memory
    actor: Actor
    content_delta: int = 0
    history_added: int = 0
    file_delta: int = 0
    touched: set[str] = field(default_factory=set)
    # The file at each path read or written in this transaction (the memory is locked, so
    # no other writer changes them meanwhile).
    files: dict[str, File | None] = field(default_factory=dict)

    def current(self, path: str) -> File | None:
        if path not in self.files:
            self.files[path] = File.objects.filter(memory=self.memory, path=path).first()
        return self.files[path]

    def _cas(self, base: Base, path: str) -> QuerySet[File]:
        file_id, version = base.known()
        return File.objects.filter(pk=file_id, memory=self.memory, path=path, version=version)

    def put(
        self,
        path: str,
        content: str,
        base: Base,
        action: str,
        *,
        other_path: str | None = None,
        restored_from: str | None = None,
    ) -> File:
        """Create (base absent) or replace the file at ``path``; 412 when base is stale.

        ``path`` and ``content`` are checked by the caller (clean_path, content_size).
        """
        size = utf8_size(content)
        current = self.current(path)
        now = timezone.now()
        who = {
            "principal_id": self.actor.principal.id,
            "run_id": self.actor.run_id,
            "tool_call_id": self.actor.tool_call_id,
        }
        if base.absent:
            if current is not None:
                raise stale(path, current, f"{path} already exists (version {current.version})")
            try:
                with transaction.atomic():
                    file = File.objects.create(
                        workspace_id=self.memory.workspace_id,
                        memory=self.memory,
                        path=path,
                        content=content,
                        size=size,
                        created_at=now,
                        updated_at=now,
                        **who,
                    )
            except IntegrityError:
                self.files.pop(path, None)
                raise stale(path, self.current(path)) from None
            self.file_delta += 1
            self.content_delta += size
        else:
            changed = self._cas(base, path).update(
                content=content, size=size, version=F("version") + 1, updated_at=now, **who
            )
            if changed != 1 or current is None:
                raise stale(path, current)
            self.content_delta += size - current.size
            # The compare-and-set matched base exactly, so this is the row as it is now.
            file = File(
                id=current.id,
                workspace_id=current.workspace_id,
                memory=self.memory,
                path=path,
                content=content,
                size=size,
                version=base.known()[1] + 1,
                created_at=current.created_at,
                updated_at=now,
                **who,
            )
        self.files[path] = file
        self._revision(path, action, file, content, size, other_path, restored_from)
        return file

    def remove(self, path: str, base: Base, action: str, *, other_path: str | None = None) -> None:
        """Delete the file at ``path`` if it is still at ``base``; 412 otherwise."""
        current = self.current(path)
        if base.absent or current is None:
            raise stale(path, current)
        deleted, _ = self._cas(base, path).delete()
        if deleted != 1:
            raise stale(path, current)
        self.files[path] = None
        self.file_delta -= 1
        self.content_delta -= current.size
        self._revision(path, action, current, None, 0, other_path, None, version=None)

    def _revision(
        self,
        path: str,
        action: str,
        file: File,
        content: str | None,
        size: int,
        other_path: str | None,
        restored_from: str | None,
        **kw: int | None,
    ) -> None:
        Revision.objects.create(
            workspace_id=self.memory.workspace_id,
            memory=self.memory,
            path=path,
            action=action,
            file_id=file.id,
            version=kw.get("version", file.version),
            content=content,
            size=size,
            other_path=other_path,
            restored_from=restored_from,
            principal_type=self.actor.principal.kind,
            principal_id=self.actor.principal.id,
            run_id=self.actor.run_id,
            tool_call_id=self.actor.tool_call_id,
        )
        self.history_added += size
        self.touched.add(path)

    def finish(self) -> None:
        """Enforce the limits and store the memory's new byte accounting."""
        limit = setting("memory.max_total_bytes")
        content = self.memory.content_bytes + self.content_delta
        if self.content_delta > 0 and content > limit:
            raise ApiError(
                409,
                f"the memory's files would take {content} bytes; it holds at most {limit}",
                reason=Reason.MEMORY_FULL,
            )
        history = self.memory.history_bytes + self.history_added
        history -= prune_per_file(self.memory, self.touched)
        history -= prune_oldest(self.memory, content + history - limit)
        Memory.objects.filter(pk=self.memory.pk).update(
            content_bytes=content,
            history_bytes=history,
            file_count=F("file_count") + self.file_delta,
        )


def _delete_revisions(rows: list[tuple[int, int]]) -> int:
    if rows:
        Revision.objects.filter(pk__in=[pk for pk, _ in rows]).delete()
    return sum(size for _, size in rows)


def prune_per_file(memory: Memory, paths: set[str]) -> int:
    """Keep the newest ``memory.revisions_per_file`` revisions of each path; bytes freed."""
    keep = setting("memory.revisions_per_file")
    freed = 0
    for path in paths:
        rows = Revision.objects.filter(memory=memory, path=path).order_by("-id")
        freed += _delete_revisions(list(rows.values_list("id", "size")[keep:]))
    return freed


def prune_oldest(memory: Memory, excess: int) -> int:
    """Delete the memory's oldest revisions until ``excess`` bytes are freed; bytes freed."""
    if excess <= 0:
        return 0
    rows: list[tuple[int, int]] = []
    freed = 0
    oldest = Revision.objects.filter(memory=memory).order_by("id").values_list("id", "size")
    for pk, size in oldest.iterator(chunk_size=500):
        rows.append((pk, size))
        freed += size
        if freed >= excess:
            break
    return _delete_revisions(rows)


@contextmanager
def writing(
    actor: Actor, memory_id: str, *, deleted_reason: Reason | None = None
) -> Iterator[Writer]:
    """A transaction holding the memory's lock; the accounting is stored at its end."""
    actor.principal.require(Permission.RUN)
    with transaction.atomic():
        writer = Writer(lock_memory(actor.principal, memory_id, deleted_reason), actor)
        yield writer
        writer.finish()
