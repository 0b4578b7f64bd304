"""Runs: accepting one on a thread (it gets a run token), and ending it.

The rules of a run's fields are declared here (:class:`~memoryhub.rules.Rule`); what they
cannot state (``parent_run_id`` names a run of the workspace, ``inline`` needs one) stays in
:func:`accept_run`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

from django.db import transaction
from django.utils import timezone

from facts.services.cleanup import drop_eval_memory
from memoryhub import audit
from memoryhub.conf import setting
from memoryhub.errors import ApiError
from memoryhub.ids import hash_secret, new_secret
from memoryhub.models import Permission, Run, Thread
from memoryhub.principals import Principal
from memoryhub.reasons import Reason
from memoryhub.rules import Rule
from memoryhub.services.common import get_in_workspace
from threads.models import RunMount
from threads.services import mounts
from threads.services.context import build_run_context
from threads.services.threads import get_thread
from threads.services.toolset import run_tool_definitions

RUNS = Run.objects.select_related("thread", "agent", "end_user", "workspace")


@dataclass
class AcceptedRun:
    run: Run
    token: str  # shown once, in the answer that accepts the run
    mounts: list[RunMount]
    context: str = ""
    tools: list = field(default_factory=list)


def validate_flag(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise ApiError(422, f"{name} must be true or false")
    return value


def check_parent_run_id(value: object) -> str:
    if not isinstance(value, str):
        raise ApiError(422, "parent_run_id must be a run id")
    return value


def check_input(value: object) -> object:
    """Any JSON: the request parser has refused what JSON (and jsonb) cannot hold."""
    return value


EVAL = Rule(partial(validate_flag, name="eval"), {"type": "boolean"})
HISTORY_COMPACTED = Rule(partial(validate_flag, name="history_compacted"), {"type": "boolean"})
INLINE = Rule(partial(validate_flag, name="inline"), {"type": "boolean"})
PARENT_RUN_ID = Rule(check_parent_run_id, {"type": "string", "minLength": 1}, nullable=True)
INPUT = Rule(check_input, {})


def _parent(principal: Principal, parent_run_id: str | None) -> Run | None:
    if parent_run_id is None:
        return None
    parent = RUNS.filter(workspace_id=principal.workspace_id, pk=parent_run_id).first()
    if parent is None:
        raise ApiError(422, "parent_run_id names no run of this workspace")
    return parent


def accept_run(
    principal: Principal,
    thread_id: str,
    *,
    input: object = None,
    parent_run_id: str | None = None,
    eval: bool = False,
    history_compacted: bool = False,
    inline: bool = False,
) -> AcceptedRun:
    """Accept a run of checked fields on a thread that is not archived."""
    principal.require(Permission.RUN)
    with transaction.atomic():
        thread = get_thread(principal, thread_id, lock=True)
        if thread.status == Thread.Status.ARCHIVED:
            raise ApiError(409, "the thread is archived", reason=Reason.THREAD_ARCHIVED)
        parent = _parent(principal, parent_run_id)
        if inline and parent is None:
            raise ApiError(422, "an inline subagent run needs parent_run_id")
        # A child of an eval run is part of that eval and shares its temporary memory.
        is_eval = eval or bool(parent and parent.is_eval)
        token = new_secret("rt")
        run = Run.objects.create(
            workspace=principal.workspace,
            agent=thread.agent,
            thread=thread,
            end_user=thread.end_user,
            parent_run=parent,
            token_hash=hash_secret(token),
            is_eval=is_eval,
            eval_root=(parent.eval_root or parent) if parent and parent.is_eval else None,
            inline=inline,
            history_compacted=history_compacted,
            input=input,
        )
        if thread.first_run_at is None:
            mounts.join_first_run_mounts(thread, run)
            Thread.objects.filter(pk=thread.pk).update(first_run_at=run.created_at)
        frozen = [] if inline else mounts.freeze_mounts(thread, run)
        audit.record(principal, "run.accept", "run", run.id, thread=thread.id)
    accepted = AcceptedRun(run=run, token=token, mounts=frozen)
    if frozen:
        # Outside the transaction: recall may wait on slow backends for a while.
        accepted.context = build_run_context(run, frozen, full=history_compacted)
        accepted.tools = run_tool_definitions(thread.agent, frozen)
    _keep_received(accepted)
    return accepted


def _keep_received(accepted: AcceptedRun) -> None:
    """Keep with the run exactly what it is given: the context block (built within
    memory.context_bytes, and cut there should a kind overshoot) and the tools offered.
    Erasing the run's person clears them."""
    limit = int(setting("memory.context_bytes"))
    accepted.context = accepted.context.encode("utf-8")[:limit].decode("utf-8", "ignore")
    run = accepted.run
    run.context, run.tools_offered = accepted.context, accepted.tools
    # Only while the run still has its person: an erasure that came in meanwhile wins.
    Run.objects.filter(pk=run.pk, end_user_id=run.end_user_id).update(
        context=run.context, tools_offered=run.tools_offered
    )


def get_run(principal: Principal, run_id: str) -> Run:
    principal.require(Permission.READ)
    if principal.run is not None and principal.run.id != run_id:
        raise ApiError(404, "run not found")  # a run token sees only its own run
    return get_in_workspace(RUNS, principal, run_id, "run")


def own_run(principal: Principal) -> AcceptedRun:
    """The run of a run token as it was accepted (its frozen mounts, and the context and
    tools it received), for a runtime that was handed only the token."""
    if principal.run is None:
        raise ApiError(401, "this call takes the run's own token (x-agentos-run-token)")
    run = RUNS.get(pk=principal.run.id)
    frozen = list(RunMount.objects.filter(run=run))
    # Erasing the run's person cleared what it received: it is then empty.
    return AcceptedRun(
        run=run, token="", mounts=frozen, context=run.context or "", tools=run.tools_offered or []
    )


def end_run(principal: Principal, run_id: str) -> Run:
    if principal.run is not None and principal.run.id != run_id:
        raise ApiError(404, "run not found")
    if principal.run is None:
        principal.require(Permission.RUN)
    with transaction.atomic():
        run = get_in_workspace(RUNS, principal, run_id, "run", lock=True)
        if run.is_running:
            run.status = Run.Status.ENDED
            run.ended_at = timezone.now()
            run.save(update_fields=["status", "ended_at"])
            # The root run of an eval takes its tree's temporary facts memory with it.
            drop_eval_memory(run)
            audit.record(principal, "run.end", "run", run.id)
    return run
