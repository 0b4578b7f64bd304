"""Audit events: who did what to which object. Ids and paths only, never content."""

from __future__ import annotations

import contextvars
from typing import Any

from memoryhub.models import AuditEvent
from memoryhub.principals import Principal

# Set by the API for the length of a request so that services need not pass it around.
current_request_id: contextvars.ContextVar[str] = contextvars.ContextVar(
    "memoryhub_request_id", default=""
)


def record(
    principal: Principal,
    action: str,
    object_type: str,
    object_id: str,
    **details: Any,
) -> AuditEvent:
    return AuditEvent.objects.create(
        workspace=principal.workspace,
        principal_type=principal.kind,
        principal_id=principal.id,
        action=action,
        object_type=object_type,
        object_id=str(object_id),
        details=details,
        request_id=current_request_id.get(),
    )
