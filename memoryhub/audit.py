"""Audit events: who did what to which object. Ids and paths only, never content.

A detail that names an end user does so by their external id under the key ``end_user``, or
inside a path as ``users/<id>/``: that is where ``pseudonymise_end_user`` looks for them
when they are erased.
"""

from __future__ import annotations

import contextvars
import re
from typing import Any

from django.db import connection
from django.db.models import Q, TextField
from django.db.models.functions import Cast
from django.utils.crypto import salted_hmac

from memoryhub.models import AuditEvent
from memoryhub.principals import Principal

# Set by the API for the length of a request so that services need not pass it around.
current_request_id: contextvars.ContextVar[str] = contextvars.ContextVar(
    "memoryhub_request_id", default=""
)

_PSEUDONYM_SALT = "memoryhub.audit.erased-end-user"

# Only rows of the workspace that can name the person are rewritten (LIKE on "users/<id>",
# or the end_user detail), and only the whole segment "users/<id>" in them: "users/<id>.x/"
# or "users/x:<id>/" belong to other people. In the details' JSON text a path value starts
# after '"' or '/'; in object_id (a file's is "<memory id>:<path>") after '^', ':' or '/'.
_PSEUDONYMISE_SQL = r"""
UPDATE memoryhub_auditevent
SET object_id = left(  -- a longer pseudonym must not push a long file path past the column
        regexp_replace(
            object_id, '(^|[/:])users/' || %(id_re)s || '(?=/|$)', '\1users/' || %(pseudonym)s, 'g'
        ),
        %(max_object_id)s
    ),
    details = regexp_replace(
        details::text,
        '(["/]users/|"end_user": ")' || %(id_re)s || '(?=[/"])',
        '\1' || %(pseudonym)s,
        'g'
    )::jsonb
WHERE workspace_id = %(workspace_id)s
  AND (object_id LIKE %(like)s OR details::text LIKE %(like)s
       OR details ->> 'end_user' = %(external_id)s)
"""


def record(
    principal: Principal,
    action: str,
    object_type: str,
    object_id: str,
    **details: Any,
) -> AuditEvent:
    made = event(principal, action, object_type, object_id, **details)
    made.save(force_insert=True)
    return made


def event(
    principal: Principal,
    action: str,
    object_type: str,
    object_id: str,
    **details: Any,
) -> AuditEvent:
    """The event ``record`` saves, unsaved: for a write that inserts it with its own rows
    (``memoryhub.rows``)."""
    return AuditEvent(
        workspace=principal.workspace,
        principal_type=principal.kind,
        principal_id=principal.id,
        action=action,
        object_type=object_type,
        object_id=str(object_id),
        details=details,
        request_id=current_request_id.get(),
    )


def pseudonym(workspace_id: str, external_id: str) -> str:
    """``erased-<16 hex>``: a keyed hash (from SECRET_KEY) of the person in the workspace.

    The same person always gets the same pseudonym, so an operator can still follow one
    erased person's rows, but without the key it does not lead back to the id.
    """
    value = f"{workspace_id}\x00{external_id}"
    digest = salted_hmac(_PSEUDONYM_SALT, value, algorithm="sha256").hexdigest()
    return f"erased-{digest[:16]}"


def pseudonymise_end_user(workspace_id: str, external_id: str) -> tuple[str, int]:
    """Replace an end user's external id in the workspace's audit rows.

    Returns the pseudonym and how many rows changed.

    One UPDATE in the database. External ids are letters, digits and ``. _ : @ -`` (none of
    them escaped in JSON text), and the pseudonym keeps the JSON valid.
    """
    replacement = pseudonym(workspace_id, external_id)
    like_id = re.sub(r"([\\%_])", r"\\\1", external_id)
    with connection.cursor() as cursor:
        cursor.execute(
            _PSEUDONYMISE_SQL,
            {
                "workspace_id": workspace_id,
                "external_id": external_id,
                # Python's escaping of . and - reads as the literal character in PostgreSQL too.
                "id_re": re.escape(external_id),
                "pseudonym": replacement,
                "like": f"%users/{like_id}%",
                "max_object_id": AuditEvent._meta.get_field("object_id").max_length,
            },
        )
        return replacement, cursor.rowcount


def mentions_end_user(workspace_id: str, external_id: str) -> int:
    """Audit rows of the workspace that still name the person (the erase's verification)."""
    id_re = re.escape(external_id)
    object_re = rf"(^|[/:])users/{id_re}(/|$)"
    details_re = rf'(["/]users/|"end_user": "){id_re}[/"]'
    rows = AuditEvent.objects.filter(workspace_id=workspace_id)
    rows = rows.annotate(details_text=Cast("details", TextField()))
    named = Q(object_id__regex=object_re) | Q(details_text__regex=details_re)
    return rows.filter(named | Q(details__end_user=external_id)).count()
