"""Workspaces and their API keys (operators' commands and the admin call these)."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from memoryhub.errors import ApiError
from memoryhub.ids import hash_secret, new_secret
from memoryhub.models import ApiKey, Permission, Workspace


def create_workspace(name: str) -> Workspace:
    name = (name or "").strip()
    if not name or len(name) > 200:
        raise ApiError(422, "a workspace name is 1-200 characters")
    return Workspace.objects.create(name=name)


def create_api_key(workspace: Workspace, permission: str, name: str = "") -> tuple[ApiKey, str]:
    """A new key and its secret. The secret is returned once and never stored."""
    if permission not in Permission.values:
        raise ApiError(422, f"permission must be one of {', '.join(Permission.values)}")
    secret = new_secret("mh")
    key = ApiKey.objects.create(
        workspace=workspace, permission=permission, name=name, secret_hash=hash_secret(secret)
    )
    return key, secret


@transaction.atomic
def revoke_api_key(key: ApiKey) -> ApiKey:
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
    return key
