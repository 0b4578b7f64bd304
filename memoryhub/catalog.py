"""The catalog of memories: one list of file and record memories, extended by each kind.

``memoryhub`` owns ``/api/v1/memories`` and ``threads`` runs the mounts, but neither knows
a kind. Each kind's app registers a :class:`MemoryKind` in its ``AppConfig.ready()``:
everything a kind contributes, from what it validates on create, what it adds to a
listing and what deleting one of its memories sets off, to the tools and the context block
a run's mounts of it get. Callers look a kind up (:func:`kind_named`) and never branch on
its name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from memoryhub.errors import ApiError


class Mount(Protocol):
    """A run's mount of a memory, as the kinds read it (``threads.models.RunMount``)."""

    name: str
    memory_id: str
    kind: str
    access: str  # "read" or "write"
    recall: bool


def _no_tools(mounts: Sequence[Mount], disabled: set[str]) -> list[Any]:
    return []


def _no_context(run: Any, mount: Mount, *, budget_bytes: int, **_: Any) -> str:
    return ""


def _no_tool_runs(principal: Any, mount: Mount, tool: Any, arguments: dict, **_: Any) -> str:
    raise ApiError(403, f"{tool.name} is not offered to this run")


@dataclass
class MemoryKind:
    kind: str  # "file" or "record"
    types: set[str]  # the values of ``type`` that make a memory of this kind
    # (principal, data) -> extra model fields for a new memory (e.g. provider, namespace);
    # raises ApiError for what the kind refuses. ``data`` is the request body.
    prepare_create: Callable[[Any, dict], dict] = lambda principal, data: {}
    # The body fields this kind accepts on create beyond the common ones.
    create_fields: set[str] = field(default_factory=set)
    # (principal, memory) -> None, inside the delete transaction.
    on_delete: Callable[[Any, Any], None] = lambda principal, memory: None
    # (memories) -> {memory id: {field: value}} merged into each listed memory.
    stats: Callable[[Iterable[Any]], dict[str, dict]] = lambda memories: {}
    # Whether always_load applies to this kind.
    always_load: bool = True
    # (value) -> the cleaned list of always_load paths; raises ApiError for a bad path.
    clean_always_load: Callable[[Any], list] | None = None
    # (principal, memory) -> None, inside the create transaction once the row exists
    # (e.g. to derive something from the new memory's id).
    after_create: Callable[[Any, Any], None] = lambda principal, memory: None
    # The built-in guide of this kind's memories when neither the memory nor the
    # deployment (memory.default_guide.<kind>) gives one; empty: BUILTIN_GUIDES[kind].
    default_guide: str = ""
    # () -> "ok", or why this kind's backends (its memory providers) failed recently:
    # ``/healthz`` reports it as ``memory_providers``, a degraded service and not a down one.
    health: Callable[[], str] = lambda: "ok"

    # -- what a run's mounts of this kind get (threads calls these) --------------------------
    # The toolset keys of this kind's tools (``file_view``...), and those a read mount gets.
    tool_keys: tuple[str, ...] = ()
    read_tool_keys: frozenset[str] = frozenset()
    # (the run's mounts of this kind, disabled tool keys) -> the memoryhub.tools.Tool list
    # offered: with several mounts each takes a ``memory`` argument naming the ones it reaches.
    tools: Callable[[Sequence[Mount], set[str]], list[Any]] = _no_tools
    # (principal, mount, tool, checked arguments, *, run, tool_call_id) -> the tool message.
    run_tool: Callable[..., str] = _no_tool_runs
    # Whether a tool's work is in the database, so it commits with the call's record.
    tools_in_database: bool = True
    # (run, mounts of this kind) -> {memory id: block}, fetched before the blocks are laid
    # out (record recall runs for all mounts at once); mounts without one get no block.
    prefetch_context: Callable[[Any, Sequence[Mount]], dict[str, str]] | None = None
    # (run, mount, *, budget_bytes, full, prefetched) -> the mount's context block ("" for
    # none); ``prefetched`` is what prefetch_context fetched for all the run's mounts.
    context_block: Callable[..., str] = _no_context

    def tool_allowed(self, key: str, access: str) -> bool:
        return access == "write" or key in self.read_tool_keys


# The built-in guides by kind, used when a kind registers none of its own.
BUILTIN_GUIDES = {
    "file": (
        "Keep one file per topic, with a clear path such as prefs/language.md. "
        "Read a file before changing it, keep files short and current, and record "
        "decisions with their reason."
    ),
    "record": (
        "Record one stable, self-contained fact per record, such as a preference or a "
        "decision. Update a record when it changes instead of adding a contradicting one."
    ),
}

_kinds: dict[str, MemoryKind] = {}


def register_kind(kind: MemoryKind) -> MemoryKind:
    _kinds[kind.kind] = kind
    return kind


def kind_named(kind: str) -> MemoryKind:
    return _kinds[kind]


def kind_for_type(memory_type: object) -> MemoryKind:
    for kind in _kinds.values():
        if isinstance(memory_type, str) and memory_type in kind.types:
            return kind
    known = sorted(t for k in _kinds.values() for t in k.types)
    raise ApiError(422, f"type must be one of: {', '.join(known) or 'none registered'}")


def kinds() -> list[MemoryKind]:
    return list(_kinds.values())


def kind_of_tool(key: str) -> MemoryKind | None:
    """The kind whose tool has this toolset key (``file_view``), if any."""
    return next((kind for kind in _kinds.values() if key in kind.tool_keys), None)


def builtin_guide(kind: MemoryKind) -> str:
    return kind.default_guide or BUILTIN_GUIDES.get(kind.kind, "")
