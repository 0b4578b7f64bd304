"""Small helpers the services of every app share."""

from __future__ import annotations

from typing import Any, TypeVar

from django.db import models
from django.db.models import F
from django.utils import timezone

from memoryhub.errors import ApiError
from memoryhub.etags import check_if_match
from memoryhub.principals import Principal
from memoryhub.rules import Rule

M = TypeVar("M", bound=models.Model)


def get_in_workspace(
    queryset: models.QuerySet[M], principal: Principal, pk: Any, what: str, *, lock: bool = False
) -> M:
    """The object with this id in the principal's workspace; 404 for any other workspace."""
    qs = queryset.filter(workspace_id=principal.workspace_id)
    if lock:
        qs = qs.select_for_update(of=("self",))
    obj = qs.filter(pk=pk).first() if isinstance(pk, str) else None
    if obj is None:
        raise ApiError(404, f"{what} not found")
    return obj


def bump_version(obj: models.Model, if_match: str | None, **fields: Any) -> None:
    """Compare-and-set on ``version``: apply ``fields`` only if the ETag still matches.

    The caller holds a lock on the row (select_for_update), so the check and the update
    see the same version.
    """
    if if_match is not None:
        check_if_match(if_match, obj.serializable_value("version"))
    if any(f.name == "updated_at" for f in obj._meta.fields):
        fields.setdefault("updated_at", timezone.now())
    type(obj)._default_manager.filter(pk=obj.pk).update(version=F("version") + 1, **fields)
    obj.refresh_from_db()


def bump_all(queryset: models.QuerySet, **fields: Any) -> int:
    """A bulk change that clients can see: every row gets ``version + 1`` (a new ETag) and,
    where the model has one, ``updated_at = now``, as ``bump_version`` gives a single row.
    """
    if any(f.name == "updated_at" for f in queryset.model._meta.fields):
        fields.setdefault("updated_at", timezone.now())
    return queryset.update(version=F("version") + 1, **fields)


NAME_MAX_CHARS = 200


def validate_name(value: Any, field: str = "name", max_chars: int = NAME_MAX_CHARS) -> str:
    """A display name: 1 to ``max_chars`` characters, not only spaces; returned stripped."""
    if not isinstance(value, str) or not value.strip() or len(value) > max_chars:
        raise ApiError(422, f"{field} is 1-{max_chars} characters")
    return value.strip()


# A display name (agents, memories, providers).
NAME = Rule(validate_name, {"type": "string", "minLength": 1, "maxLength": NAME_MAX_CHARS})
