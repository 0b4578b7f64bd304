"""Workspaces and their API keys (operators' commands and the admin call these)."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from memoryhub import audit
from memoryhub.errors import ApiError
from memoryhub.ids import hash_secret, new_secret
from memoryhub.models import ApiKey, Permission, Workspace
from memoryhub.principals import Principal


def create_workspace(name: str) -> Workspace:
    name = (name or "").strip()
    if not name or len(name) > 200:
        raise ApiError(422, "a workspace name is 1-200 characters")
    return Workspace.objects.create(name=name)


def create_api_key(
    workspace: Workspace, permission: str, name: str = "", *, principal: Principal | None = None
) -> tuple[ApiKey, str]:
    """A new key and its secret. The secret is returned once and never stored.

    ``principal`` is who creates it (staff in the admin), for the audit; operators'
    commands, which have no one to name, leave it out.
    """
    if permission not in Permission.values:
        raise ApiError(422, f"permission must be one of {', '.join(Permission.values)}")
    secret = new_secret("mh")
    with transaction.atomic():
        key = ApiKey.objects.create(
            workspace=workspace, permission=permission, name=name, secret_hash=hash_secret(secret)
        )
        if principal is not None:
            audit.record(principal, "api_key.create", "api_key", key.id, permission=permission)
    return key, secret


def revoke_api_key(key: ApiKey, principal: Principal | None = None) -> ApiKey:
    """Revoke ``key`` for good (a second revoke changes nothing); audited as ``principal``."""
    with transaction.atomic():
        locked = ApiKey.objects.select_for_update().get(pk=key.pk)
        if locked.revoked_at is None:
            locked.revoked_at = timezone.now()
            locked.save(update_fields=["revoked_at"])
            if principal is not None:
                audit.record(principal, "api_key.revoke", "api_key", key.id)
    key.revoked_at = locked.revoked_at
    return key
