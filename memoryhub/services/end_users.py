"""End users: the people agents serve, and erasing them."""

from __future__ import annotations

import re

from django.db import transaction
from django.utils import timezone

from memoryhub import audit, extensions
from memoryhub.errors import ApiError
from memoryhub.models import EndUser, Permission, Run, Thread
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


def list_end_users(principal: Principal):
    principal.require(Permission.READ)
    return EndUser.objects.filter(workspace_id=principal.workspace_id).order_by("-created_at", "id")


def erase_end_user(principal: Principal, external_id: str) -> None:
    """Remove a person: what each app keeps about them, their threads' link to them.

    Their running runs end and their threads are archived (with a new ETag), so that nothing
    can write to their folders again after the erase. Audit rows keep a keyed pseudonym of
    their id, never the id itself.
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
        now = timezone.now()
        Run.objects.filter(end_user=end_user, status=Run.Status.RUNNING).update(
            status=Run.Status.ENDED, ended_at=now
        )
        # What the person said to the agent, and what their runs were given (a context that
        # may quote them), go with them; the runs stay as bare records.
        Run.objects.filter(end_user=end_user).update(input=None, context=None, tools_offered=None)
        # Every thread of theirs changes (archived, and end_user becomes null below), archived
        # ones too: a new ETag and updated_at, so no client keeps believing its old copy.
        bump_all(Thread.objects.filter(end_user=end_user), status=Thread.Status.ARCHIVED)
        for eraser in extensions.end_user_erasers:
            eraser(principal, end_user)
        # Their id stays in no audit row: users/<id>/ paths and end_user details get a keyed
        # pseudonym. Threads and runs keep no copy of it: their end_user is set to NULL by
        # end_user.delete() (on_delete=SET_NULL), inside this transaction.
        pseudonym = audit.pseudonymise_end_user(end_user.workspace_id, end_user.external_id)
        audit.record(principal, "end_user.erase", "end_user", end_user.id, pseudonym=pseudonym)
        end_user.delete()
