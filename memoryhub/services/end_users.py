"""End users: the people agents serve, and erasing them."""

from __future__ import annotations

import re

from django.db import transaction
from django.utils import timezone

from memoryhub import audit, extensions
from memoryhub.errors import ApiError
from memoryhub.models import EndUser, Permission, Run, Thread
from memoryhub.principals import Principal

# The id becomes the folder name in users/{user}/, so it follows the fact path segment rule
# (letters, digits and . _ : @ -; braces are left out so that it never reads as a placeholder).
EXTERNAL_ID_RE = re.compile(r"[\w.:@-]{1,100}")


def validate_external_id(value: object) -> str:
    """The runtime's own id for a person: 1-100 letters, digits and ``. _ : @ -``."""
    if not isinstance(value, str) or not EXTERNAL_ID_RE.fullmatch(value):
        raise ApiError(422, "end_user is 1-100 letters, digits and . _ : @ -")
    return value


def get_or_create_end_user(principal: Principal, external_id: object) -> EndUser:
    external_id = validate_external_id(external_id)
    end_user, _ = EndUser.objects.get_or_create(
        workspace_id=principal.workspace_id, external_id=external_id
    )
    return end_user


def list_end_users(principal: Principal):
    principal.require(Permission.READ)
    return EndUser.objects.filter(workspace_id=principal.workspace_id).order_by("-created_at", "id")


def erase_end_user(principal: Principal, external_id: str) -> None:
    """Remove a person: what each app keeps about them, their threads' link to them.

    Their running runs end and their threads are archived, so that nothing can write to
    their folders again after the erase.
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
        # What the person said to the agent goes with them; the runs stay as bare records.
        Run.objects.filter(end_user=end_user).update(input=None)
        Thread.objects.filter(end_user=end_user).update(status=Thread.Status.ARCHIVED)
        for eraser in extensions.end_user_erasers:
            eraser(principal, end_user)
        audit.record(principal, "end_user.erase", "end_user", end_user.id)
        end_user.delete()
