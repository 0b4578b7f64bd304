"""DRF authentication: ``Authorization: Bearer <api key>`` and ``x-agentos-run-token``."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

from memoryhub.errors import ApiError
from memoryhub.ids import hash_secret
from memoryhub.models import ApiKey, Run
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


def principal_for_run_token(token: str) -> Principal:
    run = (
        Run.objects.select_related("workspace", "end_user")
        .filter(token_hash=hash_secret(token))
        .first()
    )
    if run is None:
        raise _unauthenticated("invalid run token")
    return Principal.for_run(run)


class ApiKeyAuthentication(BaseAuthentication):
    def authenticate(self, request: Request):
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
    def authenticate(self, request: Request):
        token = request.META.get("HTTP_X_AGENTOS_RUN_TOKEN", "")
        if not token:
            return None
        principal = principal_for_run_token(token.strip())
        return principal, principal.run

    def authenticate_header(self, request: Request) -> str:
        return "Bearer"
