"""The client's exceptions: one per kind of refusal, carrying the error envelope."""

from __future__ import annotations

from typing import Any


class MemoryHubError(Exception):
    """A refusal: ``status``, ``code``, ``reason`` and ``message`` of the error envelope."""

    def __init__(self, status: int, error: dict[str, Any]) -> None:
        self.status = status
        self.code = error.get("code", "error")
        self.reason = error.get("reason")
        self.message = error.get("message", "")
        self.error = error
        super().__init__(f"{status} {self.reason or self.code}: {self.message}")


class InvalidRequest(MemoryHubError):
    """400, 411, 413, 415, 422: the request itself is wrong."""


class Unauthenticated(MemoryHubError):
    """401: no, a bad or a revoked credential, or a write by an ended run."""


class Forbidden(MemoryHubError):
    """403: the credential lacks the permission (or another user's folder)."""


class NotFound(MemoryHubError):
    """404: no such object in this workspace."""


class Conflict(MemoryHubError):
    """409: a limit, a duplicate, or a write that may not have happened."""


class PreconditionFailed(MemoryHubError):
    """412 / 428: the object changed since it was read, or If-Match is missing."""

    @property
    def current(self) -> Any:
        return self.error.get("current")


class Unavailable(MemoryHubError):
    """503: a dependency (a mem0 backend) cannot answer."""


_BY_STATUS = {
    401: Unauthenticated,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    412: PreconditionFailed,
    428: PreconditionFailed,
    503: Unavailable,
}


def error_for(status: int, error: dict[str, Any]) -> MemoryHubError:
    if status in _BY_STATUS:
        return _BY_STATUS[status](status, error)
    return (InvalidRequest if 400 <= status < 500 else MemoryHubError)(status, error)
