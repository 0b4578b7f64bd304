"""Threads: conversations of one agent with one end user (or none)."""

from __future__ import annotations

from django.db import transaction

from memoryhub import audit
from memoryhub.errors import ApiError
from memoryhub.etags import check_if_match
from memoryhub.models import Agent, Permission, Thread
from memoryhub.principals import Principal
from memoryhub.services.common import bump_version, get_in_workspace
from memoryhub.services.end_users import get_or_create_end_user
from threads.services import mounts

THREADS = Thread.objects.select_related("agent", "end_user")


def create_thread(
    principal: Principal, agent_id: object, end_user: object = None, memories: object = None
) -> Thread:
    principal.require(Permission.RUN)
    if not isinstance(agent_id, str):
        raise ApiError(422, "agent_id is required")
    with transaction.atomic():
        agent = Agent.objects.filter(workspace_id=principal.workspace_id, pk=agent_id).first()
        if agent is None:
            raise ApiError(422, "agent_id names no agent of this workspace")
        person = get_or_create_end_user(principal, end_user) if end_user is not None else None
        thread = Thread.objects.create(workspace=principal.workspace, agent=agent, end_user=person)
        mounts.initial_mounts(principal, thread, memories)
        audit.record(principal, "thread.create", "thread", thread.id)
    return thread


def get_thread(principal: Principal, thread_id: str, *, lock: bool = False) -> Thread:
    principal.require(Permission.READ)
    return get_in_workspace(THREADS, principal, thread_id, "thread", lock=lock)


def list_threads(
    principal: Principal,
    *,
    agent_id: str | None = None,
    end_user: str | None = None,
    status: str | None = None,
):
    """The workspace's threads, newest first, filtered by agent, end user and status."""
    principal.require(Permission.READ)
    qs = THREADS.filter(workspace_id=principal.workspace_id)
    if status is not None:
        if status not in Thread.Status.values:
            raise ApiError(422, f"status must be one of: {', '.join(Thread.Status.values)}")
        qs = qs.filter(status=status)
    if agent_id is not None:
        qs = qs.filter(agent_id=agent_id)
    if end_user is not None:
        qs = qs.filter(end_user__external_id=end_user)
    return qs.order_by("-created_at", "id")


def fork_thread(principal: Principal, thread_id: str, memories: object = None) -> Thread:
    """A new thread of the same agent and end user, with the origin's mounts (+ ``memories``)."""
    principal.require(Permission.RUN)
    with transaction.atomic():
        origin = get_thread(principal, thread_id)
        fork = Thread.objects.create(
            workspace=principal.workspace,
            agent=origin.agent,
            end_user=origin.end_user,
            forked_from=origin,
        )
        mounts.copy_mounts(mounts.thread_mounts(origin), fork)
        mounts.initial_mounts(principal, fork, memories)
        audit.record(principal, "thread.fork", "thread", fork.id, origin=origin.id)
    return fork


def archive_thread(principal: Principal, thread_id: str, if_match: str | None) -> Thread:
    principal.require(Permission.RUN)
    with transaction.atomic():
        thread = get_thread(principal, thread_id, lock=True)
        if if_match is not None:  # stale even when it is archived already (RFC 9110 13.1.1)
            check_if_match(if_match, thread.version)
        if thread.status != Thread.Status.ARCHIVED:
            bump_version(thread, None, status=Thread.Status.ARCHIVED)
            mounts.remove_all(thread)
            audit.record(principal, "thread.archive", "thread", thread.id)
    return thread
