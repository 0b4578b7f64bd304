"""End users: the people agents serve, and erasing them."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from memoryhub import audit, extensions
from memoryhub.errors import ApiError
from memoryhub.models import EndUser, Permission, Run, Thread, ToolCall
from memoryhub.principals import Principal
from memoryhub.rules import Rule
from memoryhub.services.common import bump_all
from memoryhub.visible import invisible_in

# The id becomes the folder name in users/{user}/, so it follows the fact path segment rule
# (letters, digits and . _ : @ -; braces are left out so that it never reads as a placeholder;
# "." and ".." are refused as path segments, so as ids too).
EXTERNAL_ID_RE = re.compile(r"[\w.:@-]{1,100}")


def validate_external_id(value: object) -> str:
    """The runtime's own id for a person: 1-100 letters, digits and ``. _ : @ -``."""
    if not isinstance(value, str) or not EXTERNAL_ID_RE.fullmatch(value):
        raise ApiError(422, "end_user is 1-100 letters, digits and . _ : @ -")
    if value in (".", ".."):
        raise ApiError(422, "end_user may not be '.' or '..' (it names the folder users/<id>/)")
    if invisible := invisible_in(value):
        raise ApiError(422, f"end_user contains an invisible character ({invisible})")
    return value


END_USER = Rule(
    validate_external_id,
    {
        "type": "string",
        "minLength": 1,
        "maxLength": 100,
        "pattern": f"^{EXTERNAL_ID_RE.pattern}$",
    },
)


def get_or_create_end_user(principal: Principal, external_id: str) -> EndUser:
    """The person of a checked id (:data:`END_USER`), created on first sight."""
    end_user, _ = EndUser.objects.get_or_create(
        workspace_id=principal.workspace_id, external_id=external_id
    )
    return end_user


def list_end_users(principal: Principal) -> QuerySet[EndUser]:
    principal.require(Permission.READ)
    return EndUser.objects.filter(workspace_id=principal.workspace_id).order_by("-created_at", "id")


@dataclass(frozen=True)
class ErasureReceipt:
    """What erasing a person removed, per kind, and the search afterwards for what is left.

    It names the person by their internal id and the audit pseudonym, never by their id.
    """

    end_user: str  # the internal id (usr_...) they had
    pseudonym: str  # what the audit trail calls them from now on
    facts: int  # in their users/<id>/ folders, every agent's memory and eval memory
    versions: int  # of those facts
    threads_archived: int  # their threads: archived and no longer linked to them
    mounts_removed: int  # of those threads
    runs_ended: int  # their running runs
    runs_scrubbed: int  # runs whose input, context or offered tools were cleared
    tool_call_answers: int  # tool calls of their runs, deleted with their answers
    audit_details_pseudonymised: int  # audit rows whose id or details named them
    verified: bool  # the search afterwards found nothing of theirs
    remaining: dict[str, int]  # what it found per kind (empty when verified)

    def as_dict(self) -> dict:
        return asdict(self)


# The receipt's counts as people read them: the command, the admin and the API's docs.
RECEIPT_LABELS = {
    "facts": "facts (in users/<id>/, every agent)",
    "versions": "fact versions",
    "threads_archived": "threads archived",
    "mounts_removed": "thread mounts removed",
    "runs_ended": "running runs ended",
    "runs_scrubbed": "runs scrubbed (input, context, tools)",
    "tool_call_answers": "tool-call answers",
    "audit_details_pseudonymised": "audit rows pseudonymised",
}


def erase_end_user(principal: Principal, external_id: str) -> ErasureReceipt:
    """Remove a person: what each app keeps about them, their threads' link to them.

    Their running runs end and their threads are archived (with a new ETag), so that nothing
    can write to their folders again after the erase. Audit rows keep a keyed pseudonym of
    their id, never the id itself. Answers a receipt: the counts, and a verification pass.
    """
    principal.require(Permission.WRITE)
    with transaction.atomic():
        end_user = (
            EndUser.objects.select_for_update()
            .filter(workspace_id=principal.workspace_id, external_id=external_id)
            .first()
        )
        if end_user is None:
            raise ApiError(404, "end user not found")
        end_user_id = end_user.id  # delete() clears it
        counts, traces = _erase(principal, end_user)
    remaining = leftovers(principal.workspace_id, external_id, end_user_id, traces)
    return ErasureReceipt(
        end_user=end_user_id,
        verified=not remaining,
        remaining=remaining,
        **counts,
    )


def preview_erasure(principal: Principal, external_id: str) -> ErasureReceipt:
    """What erasing the person would remove: the erase itself, rolled back, so the counts
    are exactly the receipt's (for a confirmation page or an operator's --dry-run)."""
    with transaction.atomic():
        receipt = erase_end_user(principal, external_id)
        transaction.set_rollback(True)
    return receipt


def _erase(principal: Principal, end_user: EndUser) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The erase itself, inside the caller's transaction; (counts, the rows it changed)."""
    runs = Run.objects.filter(end_user=end_user)
    threads = Thread.objects.filter(end_user=end_user)
    traces = {"runs": list(runs.values_list("id", flat=True))}
    traces["threads"] = list(threads.values_list("id", flat=True))
    ended = runs.filter(status=Run.Status.RUNNING).update(
        status=Run.Status.ENDED, ended_at=timezone.now()
    )
    # What the person said to the agent, and what their runs were given (a context that
    # may quote them), go with them; the runs stay as bare records.
    held = Q(input__isnull=False) | Q(context__isnull=False) | Q(tools_offered__isnull=False)
    scrubbed = runs.filter(held).update(input=None, context=None, tools_offered=None)
    # Every thread of theirs changes (archived, and end_user becomes null below), archived
    # ones too: a new ETag and updated_at, so no client keeps believing its old copy.
    archived = bump_all(threads, status=Thread.Status.ARCHIVED)
    counts: dict[str, Any] = {
        "facts": 0,
        "versions": 0,
        "mounts_removed": 0,
        "tool_call_answers": 0,
    }
    for eraser in extensions.end_user_erasers:
        for kind, n in (eraser(principal, end_user) or {}).items():
            counts[kind] = counts.get(kind, 0) + n
    # Their id stays in no audit row: users/<id>/ paths and end_user details get a keyed
    # pseudonym. Threads and runs keep no copy of it: their end_user is set to NULL by
    # end_user.delete() (on_delete=SET_NULL), inside this transaction.
    pseudonym, rows = audit.pseudonymise_end_user(end_user.workspace_id, end_user.external_id)
    audit.record(principal, "end_user.erase", "end_user", end_user.id, pseudonym=pseudonym)
    end_user.delete()
    counts.update(
        pseudonym=pseudonym,
        threads_archived=archived,
        runs_ended=ended,
        runs_scrubbed=scrubbed,
        audit_details_pseudonymised=rows,
    )
    return counts, traces


def leftovers(
    workspace_id: str, external_id: str, end_user_id: str, traces: dict[str, list[str]]
) -> dict[str, int]:
    """Search again for anything of the person's; the kinds where something was found."""
    held = Q(input__isnull=False) | Q(context__isnull=False) | Q(tools_offered__isnull=False)
    linked = Q(end_user__isnull=False) | Q(status=Run.Status.RUNNING)
    found = {
        "end_user": EndUser.objects.filter(
            workspace_id=workspace_id, external_id=external_id
        ).count(),
        "threads": Thread.objects.filter(id__in=traces["threads"])
        .filter(Q(end_user__isnull=False) | ~Q(status=Thread.Status.ARCHIVED))
        .count(),
        "runs": Run.objects.filter(id__in=traces["runs"]).filter(held | linked).count(),
        "tool_call_answers": ToolCall.objects.filter(run_id__in=traces["runs"]).count(),
        "audit_rows": audit.mentions_end_user(workspace_id, external_id),
    }
    for check in extensions.end_user_leftovers:
        for kind, n in check(workspace_id, end_user_id).items():
            found[kind] = found.get(kind, 0) + n
    return {kind: n for kind, n in found.items() if n}
