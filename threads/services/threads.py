"""Threads: conversations of one agent with one end user (or none).

The rules of a thread's own fields are declared here (:class:`~memoryhub.rules.Rule`); that
``agent_id`` names an agent of the workspace needs the database and stays in the service.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction
from django.db.models import QuerySet

from memoryhub import audit
from memoryhub.errors import ApiError
from memoryhub.etags import check_if_match
from memoryhub.models import Agent, Permission, Thread
from memoryhub.principals import Principal
from memoryhub.rules import Rule
from memoryhub.services.common import bump_version, get_in_workspace
from memoryhub.services.end_users import get_or_create_end_user
from threads.services import mounts

THREADS = Thread.objects.select_related("agent", "end_user")


def check_agent_id(value: object) -> str:
    if not isinstance(value, str):
        raise ApiError(422, "agent_id is required")
    return value


def check_status(value: object) -> str:
    if value not in Thread.Status.values:
        raise ApiError(422, f"status must be one of: {', '.join(Thread.Status.values)}")
    return value


AGENT_ID = Rule(check_agent_id, {"type": "string", "minLength": 1})
STATUS = Rule(check_status, {"type": "string", "enum": Thread.Status.values})


def create_thread(
    principal: Principal,
    agent_id: str,
    *,
    end_user: str | None = None,
    memories: Sequence[dict] = (),
) -> Thread:
    """A new thread of an agent of the workspace, for a checked end-user id (or none), with
    checked initial mounts (their memories must be the workspace's)."""
    principal.require(Permission.RUN)
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


def list_threads(principal: Principal) -> QuerySet[Thread]:
    """The workspace's threads, newest first (``threads.filters`` narrows them)."""
    principal.require(Permission.READ)
    return THREADS.filter(workspace_id=principal.workspace_id).order_by("-created_at", "id")


def fork_thread(principal: Principal, thread_id: str, *, memories: Sequence[dict] = ()) -> Thread:
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
