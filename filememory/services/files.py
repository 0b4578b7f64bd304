"""Reading and changing files the way people and clients do it over REST (with ETags).

Paths and contents come checked (FILE_PATH, CONTENT: filememory/serializers.py); what is
left here needs the database: permissions, the memory, the If-Match compare-and-set and
the memory's byte limit.
"""

from __future__ import annotations

import re
from typing import Any

from django.db.models import QuerySet

from filememory.models import File, Revision
from filememory.representations import names_file
from filememory.services.writes import (
    ABSENT,
    FILE_MEMORIES,
    Actor,
    Base,
    Writer,
    stale,
    writing,
)
from memoryhub import audit
from memoryhub.errors import ApiError
from memoryhub.models import Memory, Permission
from memoryhub.principals import Principal
from memoryhub.services.common import get_in_workspace


def get_file_memory(principal: Principal, memory_id: str) -> Memory:
    principal.require(Permission.READ)
    return get_in_workspace(FILE_MEMORIES, principal, memory_id, "file memory")


def get_file(principal: Principal, memory_id: str, path: str) -> File:
    memory = get_file_memory(principal, memory_id)
    file = File.objects.filter(memory=memory, path=path).first()
    if file is None:
        raise ApiError(404, f"no file at {path}")
    return file


def list_files(principal: Principal, memory_id: str) -> QuerySet:
    """The memory's files (without content), by path (filememory/filters.py narrows them)."""
    memory = get_file_memory(principal, memory_id)
    return File.objects.filter(memory=memory).defer("content").order_by("path")


_TOKEN = re.compile(r"[0-9a-f]{16}")
_DIGITS = re.compile(r"[0-9]{1,18}")


def parse_etags(value: str) -> list[tuple[str, int]]:
    """The (file token, version) pairs of an If-Match header; malformed tags are dropped."""
    tags = []
    for raw in value.split(","):
        tag = raw.strip()
        if tag.startswith("W/"):
            continue  # If-Match compares strongly (RFC 9110): a weak tag never matches
        token, _, version = tag.strip('"').partition("-")
        if _TOKEN.fullmatch(token) and _DIGITS.fullmatch(version):
            tags.append((token, int(version)))
    return tags


def base_from_if_match(if_match: str | None, current: File | None, path: str) -> Base:
    """No If-Match: create only. ``*``: the current file, whatever its version."""
    if if_match is None:
        return ABSENT
    if if_match.strip() == "*":
        if current is None:
            raise stale(path, None)
        return Base.of(current)
    tags = parse_etags(if_match)
    for token, version in tags:
        if current is not None and names_file(token, current):
            return Base(current.id, version)
    if not tags or current is None:
        raise stale(path, current)
    return Base(0, tags[0][1])  # names no file row: the compare-and-set refuses it


def refuse_stale_early(
    principal: Principal, memory_id: str, path: str, if_match: str | None
) -> None:
    """412 for an If-Match older than the current file, before queueing for the lock.

    Versions only grow and a file row, once deleted, never comes back, so a tag of another
    row or of an older version can never match again; the compare-and-set under the
    memory's lock stays the real check.
    """
    if if_match is None or if_match.strip() == "*":
        return
    current = File.objects.filter(
        workspace_id=principal.workspace_id, memory_id=memory_id, path=path
    ).first()
    if current is not None and all(
        not names_file(token, current) or version < current.version
        for token, version in parse_etags(if_match)
    ):
        raise stale(path, current)


def put_file(
    actor: Actor, memory_id: str, path: str, content: str, if_match: str | None
) -> tuple[File, bool]:
    """Create (without If-Match) or replace (with it) a file; (file, created).

    ``writing`` requires the run permission; ``path`` and ``content`` come checked.
    """
    refuse_stale_early(actor.principal, memory_id, path, if_match)
    with writing(actor, memory_id) as writer:
        base = base_from_if_match(if_match, writer.current(path), path)
        action = Revision.Action.CREATE if base.absent else Revision.Action.UPDATE
        file = writer.put(path, content, base, action)
        audit_change(writer, f"file.{action}", path, version=file.version)
    return file, base.absent


def delete_file(actor: Actor, memory_id: str, path: str, if_match: str) -> None:
    with writing(actor, memory_id) as writer:
        current = writer.current(path)
        if current is None:
            raise ApiError(404, f"no file at {path}")
        writer.remove(path, base_from_if_match(if_match, current, path), Revision.Action.DELETE)
        audit_change(writer, "file.delete", path)


def audit_change(writer: Writer, action: str, path: str, **details: Any) -> None:
    """Audit one file change: ids and paths, never content."""
    actor = writer.actor
    if actor.run_id:
        details.update(run_id=actor.run_id, tool_call_id=actor.tool_call_id)
    audit.record(actor.principal, action, "file", f"{writer.memory.id}:{path}", **details)
