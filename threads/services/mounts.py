"""Memory mounts: which memories a thread's later runs see, under which names.

Every change locks the thread row, so the mount limit holds under concurrent requests.
The rules of a mount's fields are the kernel's (``memoryhub.services.agents``); that a
mount's memory is one of the workspace's, and each name and memory once per thread (409),
stay here.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from django.db import IntegrityError, transaction

from memoryhub import audit
from memoryhub.conf import setting
from memoryhub.errors import ApiError
from memoryhub.models import Memory, Permission, Run, Thread
from memoryhub.principals import Principal
from memoryhub.reasons import Code, Reason
from memoryhub.rules import Rule
from memoryhub.services.agents import MOUNTS_SCHEMA, check_mounts, listed, require_memories
from memoryhub.services.common import bump_version, get_in_workspace
from threads.models import RunMount, ThreadMount

MOUNTS = ThreadMount.objects.select_related("memory")
# A new thread's or fork's ``memories``: a repeated name or memory is 409 (add_mounts).
THREAD_MOUNTS = Rule(partial(check_mounts, field="memories", unique=False), MOUNTS_SCHEMA)


def mount_json(mount: ThreadMount | RunMount) -> dict:
    kind = mount.memory.kind if isinstance(mount, ThreadMount) else mount.kind
    return {
        "name": mount.name,
        "memory_id": mount.memory_id,
        "kind": kind,
        "access": mount.access,
        "recall": mount.recall,
    }


def thread_mounts(thread: Thread) -> list[ThreadMount]:
    return list(MOUNTS.filter(thread=thread))


def _writable_thread(principal: Principal, thread_id: str) -> Thread:
    principal.require(Permission.RUN)
    thread = get_in_workspace(Thread.objects.all(), principal, thread_id, "thread", lock=True)
    if thread.status == Thread.Status.ARCHIVED:
        raise ApiError(409, "the thread is archived", reason=Reason.THREAD_ARCHIVED)
    return thread


def add_mounts(thread: Thread, mounts: list[dict]) -> None:
    """Mount validated mounts on a locked thread: each name and memory once, within the limit."""
    existing = thread_mounts(thread)
    names = {m.name for m in existing}
    memories = {m.memory_id for m in existing}
    for mount in mounts:
        if mount["name"] in names:
            raise ApiError(
                409, f"the name {mount['name']} is mounted already", code=Code.ALREADY_EXISTS
            )
        if mount["memory_id"] in memories:
            raise ApiError(
                409, f"memory {mount['memory_id']} is mounted already", code=Code.ALREADY_EXISTS
            )
        names.add(mount["name"])
        memories.add(mount["memory_id"])
    limit = setting("memory.mounts_per_thread")
    if len(names) > limit:
        raise ApiError(
            409, f"a thread holds at most {limit} memory mounts", reason=Reason.MEMORY_MOUNT_LIMIT
        )
    try:
        with transaction.atomic():
            ThreadMount.objects.bulk_create(
                ThreadMount(workspace_id=thread.workspace_id, thread=thread, **m) for m in mounts
            )
    except IntegrityError:  # a memory was deleted since it was checked
        raise ApiError(422, "a memory to mount no longer exists") from None


def list_thread_mounts(principal: Principal, thread_id: str) -> tuple[Thread, list[ThreadMount]]:
    principal.require(Permission.READ)
    thread = get_in_workspace(Thread.objects.all(), principal, thread_id, "thread")
    return thread, thread_mounts(thread)


def mount(
    principal: Principal,
    thread_id: str,
    if_match: str,
    *,
    name: str,
    memory_id: str,
    access: str = "read",
    recall: bool = True,
) -> Thread:
    """Mount a memory of the workspace (checked fields) on a thread that is not archived."""
    new = {"name": name, "memory_id": memory_id, "access": access, "recall": recall}
    with transaction.atomic():
        thread = _writable_thread(principal, thread_id)
        bump_version(thread, if_match)
        require_memories(principal, {"mount": memory_id})
        add_mounts(thread, [new])
        audit.record(
            principal,
            "thread.mount",
            "thread",
            thread.id,
            name=new["name"],
            memory_id=new["memory_id"],
        )
    return thread


def _get_mount(thread: Thread, name: str) -> ThreadMount:
    found = MOUNTS.filter(thread=thread, name=name).first()
    if found is None:
        raise ApiError(404, f"no memory is mounted as {name}")
    return found


def change_mount(
    principal: Principal,
    thread_id: str,
    name: str,
    if_match: str,
    *,
    access: str | None = None,
    recall: bool | None = None,
) -> Thread:
    """Change a mount's access or recall (None: unchanged)."""
    with transaction.atomic():
        thread = _writable_thread(principal, thread_id)
        found = _get_mount(thread, name)
        bump_version(thread, if_match)
        found.access = access or found.access
        found.recall = found.recall if recall is None else recall
        found.save(update_fields=["access", "recall"])
        audit.record(principal, "thread.mount_change", "thread", thread.id, name=name)
    return thread


def unmount(principal: Principal, thread_id: str, name: str, if_match: str) -> Thread:
    with transaction.atomic():
        thread = _writable_thread(principal, thread_id)
        found = _get_mount(thread, name)
        bump_version(thread, if_match)
        found.delete()
        audit.record(principal, "thread.unmount", "thread", thread.id, name=name)
    return thread


def initial_mounts(principal: Principal, thread: Thread, memories: Sequence[dict]) -> None:
    """The checked ``memories`` of a new thread or fork (:data:`THREAD_MOUNTS`)."""
    require_memories(principal, listed("memories", memories))
    add_mounts(thread, list(memories))


def copy_mounts(source: list[ThreadMount] | list[RunMount], thread: Thread) -> None:
    """Give a new thread the mounts of another thread (a fork) or of a parent run."""
    alive = set(
        Memory.objects.filter(pk__in=[m.memory_id for m in source]).values_list("pk", flat=True)
    )
    copies = [
        {"name": m.name, "memory_id": m.memory_id, "access": m.access, "recall": m.recall}
        for m in source
        if m.memory_id in alive
    ]
    add_mounts(thread, copies)


def join_first_run_mounts(thread: Thread, run: Run) -> None:
    """On a thread's first run: an async subagent's parent mounts, then the agent's defaults.

    Each joins for a name and a memory the thread does not use yet. A default whose memory
    was deleted fails the run (invalid_argument); going over the limit fails it too.
    """
    joined = 0
    if run.parent_run_id and not run.inline:
        joined += _join(thread, list(RunMount.objects.filter(run_id=run.parent_run_id)), False)
    joined += _join(thread, thread.agent.memory_mounts, strict=True)
    if joined:
        bump_version(thread, None)


def _join(thread: Thread, candidates: list, strict: bool) -> int:
    def field(m: Any, key: str) -> Any:
        return m[key] if isinstance(m, dict) else getattr(m, key)

    existing = thread_mounts(thread)
    names = {m.name for m in existing}
    memories = {m.memory_id for m in existing}
    alive = set(
        Memory.objects.filter(
            workspace_id=thread.workspace_id,
            pk__in=[field(m, "memory_id") for m in candidates],
        ).values_list("pk", flat=True)
    )
    joining = []
    for m in candidates:
        name, memory_id = field(m, "name"), field(m, "memory_id")
        if memory_id not in alive:
            if strict:
                raise ApiError(422, f"the agent's default mount {name} names a deleted memory")
            continue
        if name in names or memory_id in memories:
            continue
        names.add(name)
        memories.add(memory_id)
        joining.append(
            {
                "name": name,
                "memory_id": memory_id,
                "access": field(m, "access"),
                "recall": field(m, "recall"),
            }
        )
    add_mounts(thread, joining)
    return len(joining)


def freeze_mounts(thread: Thread, run: Run) -> list[RunMount]:
    """The thread's mounts, copied for the run: later mount changes don't reach it."""
    frozen = [
        RunMount(
            workspace_id=run.workspace_id,
            run=run,
            name=m.name,
            memory_id=m.memory_id,
            kind=m.memory.kind,
            access=m.access,
            recall=m.recall,
        )
        for m in thread_mounts(thread)
    ]
    try:
        return RunMount.objects.bulk_create(frozen)
    except IntegrityError:  # pragma: no cover - names are unique per thread already
        raise ApiError(409, "the thread's mounts changed while the run was accepted") from None


def remove_all(thread: Thread) -> None:
    ThreadMount.objects.filter(thread=thread).delete()
