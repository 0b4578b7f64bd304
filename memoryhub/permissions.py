"""Permission classes for read < run < write. Missing credentials are 401, too little 403."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework.permissions import BasePermission

from memoryhub.errors import ApiError
from memoryhub.models import Permission
from memoryhub.principals import Principal

if TYPE_CHECKING:  # DRF's settings import this module while rest_framework.views loads
    from rest_framework.request import Request
    from rest_framework.views import APIView

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def principal_of(request: Request) -> Principal:
    user = getattr(request, "user", None)
    if not isinstance(user, Principal):
        raise ApiError(401, "credentials required", headers={"WWW-Authenticate": "Bearer"})
    return user


class _Needs(BasePermission):
    needed: str = Permission.READ

    def has_permission(self, request: Request, view: APIView) -> bool:
        principal_of(request).require(self.needed)
        return True


class CanRead(_Needs):
    needed = Permission.READ


class CanRun(_Needs):
    needed = Permission.RUN


class ReadOrWrite(BasePermission):
    """``read`` to look, ``write`` to change: the rule of the workspace's configuration."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        needed = Permission.READ if request.method in SAFE_METHODS else Permission.WRITE
        principal_of(request).require(needed)
        return True


class ReadOrRun(BasePermission):
    """``read`` to look, ``run`` to change: the rule of what agents write."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        needed = Permission.READ if request.method in SAFE_METHODS else Permission.RUN
        principal_of(request).require(needed)
        return True
