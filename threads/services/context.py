"""The memory context a run reads before its input, within ``memory.context_bytes``.

Record memories with recall on are searched in parallel for the run's input (each waited
on at most ``memory.recall_seconds``); file memories add their context blocks. Every mount
gets a fair share of what is left of the budget, and what one leaves unused flows on to the
next.
"""

from __future__ import annotations

import json
import logging

from filememory.context import file_context_block
from memoryhub.conf import setting
from memoryhub.models import Memory, Run
from records.recall import recall_many
from threads.models import RunMount

logger = logging.getLogger(__name__)


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _query(run_input: object) -> str:
    if isinstance(run_input, str):
        return run_input
    if run_input is None:
        return ""
    return json.dumps(run_input, ensure_ascii=False)


def _recalled(run: Run, mounts: list[RunMount]) -> dict[str, str]:
    wanted = [m for m in mounts if m.kind == "record" and m.recall]
    if not wanted:
        return {}
    memories = list(
        Memory.objects.select_related("provider").filter(pk__in=[m.memory_id for m in wanted])
    )
    names = {m.memory_id: m.name for m in wanted}
    return recall_many(memories, _query(run.input), names)


def build_run_context(run: Run, mounts: list[RunMount], *, full: bool) -> str:
    """The context text of a run ("" when its memories have nothing to say)."""
    remaining = int(setting("memory.context_bytes"))
    recalled = _recalled(run, mounts)
    blocks: list[str] = []
    pending = [m for m in mounts if m.kind == "record" and m.memory_id in recalled]
    pending += [m for m in mounts if m.kind == "file"]
    for index, mount in enumerate(pending):
        share = remaining // (len(pending) - index)
        if mount.kind == "record":
            block = recalled[mount.memory_id]
            if _size(block) > share:
                logger.info("run %s: recall of %s left out (over budget)", run.id, mount.name)
                continue
        else:
            block = file_context_block(
                mount.memory_id,
                thread_id=run.thread_id,
                budget_bytes=share,
                full=full,
                mount_name=mount.name,
            )
        if block:
            blocks.append(block)
            remaining -= _size(block) + 1
    return "\n".join(blocks)
