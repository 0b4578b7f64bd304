"""The client's exceptions: one per kind of refusal, each carrying the error envelope."""

from __future__ import annotations

from typing import Any

# The client's own reasons (the server's are in memoryhub.reasons, which it does not import).
RUN_ENDED = "run_ended"
NO_ANSWER = "no_answer"  # no HTTP answer came: refused, dropped or timed out


class MemoryHubError(Exception):
    """A refusal: the envelope's ``code``, ``reason`` and ``message``, and the HTTP ``status``
    (``None`` when no answer came at all)."""

    def __init__(self, status: int | None, error: dict[str, Any]) -> None:
        self.status = status
        self.code: str = error.get("code", "error")
        self.reason: str | None = error.get("reason")
        self.message: str = error.get("message", "")
        self.error = error
        super().__init__(f"{status} {self.reason or self.code}: {self.message}")

    def as_tool_text(self) -> str:
        """The text a model reads for this refusal, as memoryhub's own tools write it."""
        return f"error: {self.reason or self.code}: {self.message}"


class InvalidRequest(MemoryHubError):
    """400, 411, 413, 415, 422: the request itself is wrong."""


class Unauthenticated(MemoryHubError):
    """401: no, a bad or a revoked credential."""


class InvocationEnded(Unauthenticated):
    """401 ``run_ended``: the code used the invocation (a write, a tool call) after it ended."""


class Forbidden(MemoryHubError):
    """403: the credential lacks the permission, or another user's folder (``other_user``)."""


class NotFound(MemoryHubError):
    """404: no such object (or another user's fact)."""


class Conflict(MemoryHubError):
    """409: ``no_user``, ``memory_full``, a duplicate, a reused tool call id..."""


class PreconditionFailed(MemoryHubError):
    """412 / 428: the object changed since it was read (``.current``), or If-Match is missing."""

    @property
    def current(self) -> Any:
        return self.error.get("current")


class Unavailable(MemoryHubError):
    """503 (a dependency cannot answer), 502/504 after the retries, or no answer at all."""


_BY_STATUS: dict[int, type[MemoryHubError]] = {
    401: Unauthenticated,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    412: PreconditionFailed,
    428: PreconditionFailed,
    502: Unavailable,
    503: Unavailable,
    504: Unavailable,
}


def error_for(status: int, error: dict[str, Any]) -> MemoryHubError:
    """The exception for an error answer."""
    if status == 401 and error.get("reason") == RUN_ENDED:
        return InvocationEnded(status, error)
    if status in _BY_STATUS:
        return _BY_STATUS[status](status, error)
    return (InvalidRequest if 400 <= status < 500 else MemoryHubError)(status, error)


def no_answer(exc: Exception) -> Unavailable:
    """A request that got no answer (connection refused or dropped, timeout)."""
    return Unavailable(None, {"code": "unavailable", "reason": NO_ANSWER, "message": str(exc)})
