"""The memory context a run reads before its input, within ``memory.context_bytes``.

Each kind lays out its mounts' blocks (``memoryhub.catalog.MemoryKind``): kinds that fetch
up front (record recall, searched in parallel for the run's input and waited on at most
``memory.recall_seconds``) come first, then the others (file memories). Every mount gets a
fair share of what is left of the budget, and what one leaves unused flows on to the next.
Only mounts of memories of the run's own workspace and kind get a block, whatever the mount
rows say (an imported file can name any memory id).
"""

from __future__ import annotations

from memoryhub.catalog import kind_named, kinds
from memoryhub.conf import setting
from memoryhub.models import Memory, Run
from threads.models import RunMount


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _of_workspace(run: Run, mounts: list[RunMount]) -> list[RunMount]:
    """The mounts whose memory exists in the run's workspace, with the kind they name."""
    memories = Memory.objects.filter(workspace_id=run.workspace_id)
    found = set(memories.filter(pk__in=[m.memory_id for m in mounts]).values_list("id", "kind"))
    return [m for m in mounts if (m.memory_id, m.kind) in found]


def build_run_context(run: Run, mounts: list[RunMount], *, full: bool) -> str:
    """The context text of a run ("" when its memories have nothing to say)."""
    mounts = _of_workspace(run, mounts)
    remaining = int(setting("memory.context_bytes"))
    prefetched: dict[str, str] = {}
    for kind in kinds():
        of_kind = [m for m in mounts if m.kind == kind.kind]
        if kind.prefetch_context is not None and of_kind:
            prefetched.update(kind.prefetch_context(run, of_kind))
    pending = [m for m in mounts if m.memory_id in prefetched]
    pending += [m for m in mounts if kind_named(m.kind).prefetch_context is None]
    blocks: list[str] = []
    for index, mount in enumerate(pending):
        share = remaining // (len(pending) - index)
        block = kind_named(mount.kind).context_block(
            run, mount, budget_bytes=share, full=full, prefetched=prefetched
        )
        if block:
            blocks.append(block)
            remaining -= _size(block) + 1
    return "\n".join(blocks)
