"""The file kind of the memories catalog (registered in ``FilememoryConfig.ready``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from filememory.context import file_context_block
from filememory.models import File, Revision, SeenFile, Sighting
from filememory.services.paths import clean_path
from filememory.tools import READ_KEYS, file_tools, run_file_tool
from memoryhub.catalog import BUILTIN_GUIDES, MemoryKind, Mount
from memoryhub.errors import ApiError
from memoryhub.models import Memory, Run
from memoryhub.principals import Principal
from memoryhub.tools import FILE_TOOL_KEYS, Tool


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


def tools(mounts: Sequence[Mount], disabled: set[str]) -> list[Tool]:
    """With several file mounts, each tool takes ``memory``: the mounts it may reach."""
    if len(mounts) == 1:
        return file_tools(None, mounts[0].access, disabled)
    return file_tools([m.name for m in mounts], {m.name: m.access for m in mounts}, disabled)


def run_tool(
    principal: Principal, mount: Mount, tool: Tool, arguments: dict, *, run: Run, tool_call_id: str
) -> str:
    return run_file_tool(
        principal,
        mount.memory_id,
        tool,
        arguments,
        thread_id=run.thread_id,
        run_id=run.id,
        tool_call_id=tool_call_id,
        access=mount.access,
    )


def context_block(run: Run, mount: Mount, *, budget_bytes: int, full: bool, **_: Any) -> str:
    return file_context_block(
        mount.memory_id,
        thread_id=run.thread_id,
        budget_bytes=budget_bytes,
        full=full,
        mount_name=mount.name,
    )


FILE_KIND = MemoryKind(
    kind="file",
    types={"postgres"},
    on_delete=on_delete,
    stats=stats,
    always_load=True,
    clean_always_load=clean_always_load,
    default_guide=BUILTIN_GUIDES["file"],
    tool_keys=tuple(FILE_TOOL_KEYS),
    read_tool_keys=frozenset(READ_KEYS),
    tools=tools,
    run_tool=run_tool,
    tools_in_database=True,  # a write and its call's record commit together
    context_block=context_block,
)
