"""Permission classes for read < run < write. Missing credentials are 401, too little 403."""

from __future__ import annotations

from rest_framework.permissions import BasePermission

from memoryhub.errors import ApiError
from memoryhub.models import Permission
from memoryhub.principals import Principal

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def principal_of(request) -> Principal:
    user = getattr(request, "user", None)
    if not isinstance(user, Principal):
        raise ApiError(401, "credentials required", headers={"WWW-Authenticate": "Bearer"})
    return user


class _Needs(BasePermission):
    needed: str = Permission.READ

    def has_permission(self, request, view) -> bool:
        principal_of(request).require(self.needed)
        return True


class CanRead(_Needs):
    needed = Permission.READ


class CanRun(_Needs):
    needed = Permission.RUN


class ReadOrWrite(BasePermission):
    """``read`` to look, ``write`` to change: the rule of the workspace's configuration."""

    def has_permission(self, request, view) -> bool:
        needed = Permission.READ if request.method in SAFE_METHODS else Permission.WRITE
        principal_of(request).require(needed)
        return True


class ReadOrRun(BasePermission):
    """``read`` to look, ``run`` to change: the rule of what agents write."""

    def has_permission(self, request, view) -> bool:
        needed = Permission.READ if request.method in SAFE_METHODS else Permission.RUN
        principal_of(request).require(needed)
        return True
