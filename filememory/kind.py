"""The file kind of the memories catalog (registered in ``FilememoryConfig.ready``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from filememory.models import File, Revision, SeenFile, Sighting
from filememory.services.paths import clean_path
from memoryhub.catalog import BUILTIN_GUIDES, MemoryKind
from memoryhub.errors import ApiError
from memoryhub.models import Memory


def clean_always_load(value: Any) -> list[str]:
    paths = [clean_path(path, f"always_load[{i}]") for i, path in enumerate(value)]
    if len(set(paths)) != len(paths):
        raise ApiError(422, "always_load names each path once")
    return paths


def stats(memories: Iterable[Memory]) -> dict[str, dict]:
    # The byte accounting lives in the memory row, kept by every write transaction.
    return {
        m.id: {
            "file_count": m.file_count,
            "content_bytes": m.content_bytes,
            "history_bytes": m.history_bytes,
        }
        for m in memories
    }


def on_delete(principal: Any, memory: Memory) -> None:
    """Remove the memory's files, history and conversation state (same transaction)."""
    for model in (SeenFile, Sighting, Revision, File):
        model.objects.filter(memory=memory).delete()


FILE_KIND = MemoryKind(
    kind="file",
    types={"postgres"},
    on_delete=on_delete,
    stats=stats,
    always_load=True,
    clean_always_load=clean_always_load,
    default_guide=BUILTIN_GUIDES["file"],
)
