"""DRF authentication: ``Authorization: Bearer <api key>`` and ``x-agentos-run-token``."""

from __future__ import annotations

from datetime import timedelta

from django.db.models import Model
from django.utils import timezone
from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

from memoryhub import prepared
from memoryhub.errors import ApiError
from memoryhub.ids import hash_secret
from memoryhub.models import ApiKey, EndUser, Run, Workspace
from memoryhub.principals import Principal

LAST_USED_RESOLUTION = timedelta(minutes=1)


def _unauthenticated(message: str) -> ApiError:
    return ApiError(401, message, headers={"WWW-Authenticate": "Bearer"})


def principal_for_api_key(secret: str) -> Principal:
    key = (
        ApiKey.objects.select_related("workspace")
        .filter(secret_hash=hash_secret(secret), revoked_at__isnull=True)
        .first()
    )
    if key is None:
        raise _unauthenticated("invalid or revoked API key")
    now = timezone.now()
    if key.last_used_at is None or now - key.last_used_at > LAST_USED_RESOLUTION:
        # Coarse on purpose: one write a minute per key, not one per request.
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
    return Principal.for_api_key(key)


def _columns(
    model: type[Model], alias: str, leave_out: tuple[str, ...] = ()
) -> tuple[list[str], str]:
    fields = [f for f in model._meta.concrete_fields if f.attname not in leave_out]
    columns = ", ".join(f'{alias}."{f.column}"' for f in fields)
    return [f.attname for f in fields], columns


# Every request of a run authenticates with this lookup, so it is one prepared statement
# instead of an ORM query compiled and planned anew each time (about a millisecond saved).
# What the run was given and received (its input, up to 32 KB of context, its tools'
# definitions) is left to the few callers that read it (deferred: loaded on first access).
_RUN_FIELDS, _RUN_COLUMNS = _columns(Run, "r", leave_out=("input", "context", "tools_offered"))
_WORKSPACE_FIELDS, _WORKSPACE_COLUMNS = _columns(Workspace, "w")
_END_USER_FIELDS, _END_USER_COLUMNS = _columns(EndUser, "u")
_RUN_BY_TOKEN = (
    f"SELECT {_RUN_COLUMNS}, {_WORKSPACE_COLUMNS}, {_END_USER_COLUMNS} "  # noqa: S608
    "FROM memoryhub_run r JOIN memoryhub_workspace w ON w.id = r.workspace_id "
    "LEFT JOIN memoryhub_enduser u ON u.id = r.end_user_id WHERE r.token_hash = %s"
)


def run_for_token(token: str) -> Run | None:
    """The run of a token, with its workspace and end user loaded (its input, context and
    tools offered deferred)."""
    row = prepared.fetch_one(_RUN_BY_TOKEN, [hash_secret(token)])
    if row is None:
        return None
    split = len(_RUN_FIELDS), len(_RUN_FIELDS) + len(_WORKSPACE_FIELDS)
    run = Run.from_db("default", _RUN_FIELDS, row[: split[0]])
    run.workspace = Workspace.from_db("default", _WORKSPACE_FIELDS, row[split[0] : split[1]])
    user_row = row[split[1] :]
    run.end_user = EndUser.from_db("default", _END_USER_FIELDS, user_row) if user_row[0] else None
    return run


def principal_for_run_token(token: str) -> Principal:
    run = run_for_token(token)
    if run is None:
        raise _unauthenticated("invalid run token")
    return Principal.for_run(run)


class ApiKeyAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[Principal, ApiKey | None] | None:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header:
            return None
        scheme, _, secret = header.partition(" ")
        if scheme.lower() != "bearer" or not secret.strip():
            raise _unauthenticated("the Authorization header must be 'Bearer <api key>'")
        principal = principal_for_api_key(secret.strip())
        return principal, principal.api_key

    def authenticate_header(self, request: Request) -> str:
        return "Bearer"


class RunTokenAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[Principal, Run | None] | None:
        token = request.META.get("HTTP_X_AGENTOS_RUN_TOKEN", "")
        if not token:
            return None
        principal = principal_for_run_token(token.strip())
        return principal, principal.run

    def authenticate_header(self, request: Request) -> str:
        return "Bearer"
