"""The one error type of memoryhub and its renderers.

Every refusal is an :class:`ApiError`. REST answers render it as
``{"error": {"code", "reason", "message", ...extra}}``; model tools render it as the
text ``error: <reason or code>: <message>``. Reasons are named in :mod:`memoryhub.reasons`.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import (
    BadRequest,
    PermissionDenied,
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.db import InterfaceError, OperationalError
from django.http import Http404, JsonResponse
from django.http.multipartparser import MultiPartParserError
from kombu.exceptions import OperationalError as BrokerError
from rest_framework import exceptions as drf
from rest_framework.response import Response

from memoryhub.reasons import Code, Reason

logger = logging.getLogger(__name__)

DEFAULT_CODES: dict[int, Code] = {
    400: Code.BAD_REQUEST,
    401: Code.UNAUTHENTICATED,
    403: Code.FORBIDDEN,
    404: Code.NOT_FOUND,
    405: Code.METHOD_NOT_ALLOWED,
    406: Code.NOT_ACCEPTABLE,
    409: Code.CONFLICT,
    411: Code.LENGTH_REQUIRED,
    412: Code.PRECONDITION_FAILED,
    413: Code.PAYLOAD_TOO_LARGE,
    414: Code.URI_TOO_LONG,
    415: Code.UNSUPPORTED_MEDIA_TYPE,
    422: Code.INVALID_ARGUMENT,
    428: Code.PRECONDITION_REQUIRED,
    429: Code.RATE_LIMITED,
    431: Code.HEADERS_TOO_LARGE,
    500: Code.INTERNAL,
    503: Code.UNAVAILABLE,
}


class ApiError(Exception):
    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: Code | None = None,
        reason: Reason | None = None,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code or DEFAULT_CODES.get(status, Code.ERROR)
        self.reason = reason
        self.message = message
        self.headers = headers or {}
        self.extra = extra

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": str(self.code), "message": self.message}
        if self.reason:
            body["reason"] = str(self.reason)  # a Reason is sent as its plain value
        body.update(self.extra)
        return {"error": body}

    def as_tool_text(self) -> str:
        return f"error: {self.reason or self.code}: {self.message}"

    def __repr__(self) -> str:
        reason = str(self.reason) if self.reason else None
        return f"ApiError({self.status}, {str(self.code)!r}, {reason!r}, {self.message!r})"


def _flatten_validation(detail: Any, prefix: str = "") -> list[str]:
    if isinstance(detail, dict):
        out: list[str] = []
        for key, value in detail.items():
            name = key if key != "non_field_errors" else ""
            out += _flatten_validation(value, f"{prefix}.{name}".strip(".") if name else prefix)
        return out
    if isinstance(detail, list):
        out = []
        for index, item in enumerate(detail):
            label = prefix if not isinstance(item, dict | list) else f"{prefix}[{index}]"
            out += _flatten_validation(item, label)
        return out
    return [f"{prefix}: {detail}" if prefix else str(detail)]


# Seconds a client should wait before retrying a request refused because a dependency is
# down: a restarting PostgreSQL or Redis is back within a few.
RETRY_AFTER = "5"


def unavailable(dependency: str) -> ApiError:
    """The 503 for a dependency that did not answer (``/healthz`` says which and why)."""
    return ApiError(
        503,
        f"the {dependency} did not answer: nothing was changed, retry shortly",
        dependency=dependency,
        headers={"Retry-After": RETRY_AFTER},
    )


def malformed_request(exc: Exception) -> ApiError:
    """What Django refuses while reading a request (its query string, form or upload), which
    Django's own handler answers 400 on HTML pages: the same in the envelope, never a 500."""
    if isinstance(exc, RequestDataTooBig):
        return ApiError(413, "request body too large")
    if isinstance(exc, TooManyFieldsSent):
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
        return ApiError(400, f"too many query parameters or form fields: at most {limit}")
    if isinstance(exc, TooManyFilesSent):
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FILES
        return ApiError(400, f"too many files: at most {limit}")
    # Others (a malformed multipart body, a disallowed Host): the text may echo the request.
    return ApiError(400, "malformed request")


def from_exception(exc: Exception) -> ApiError | None:
    """The ApiError for an exception a request can raise, or None for a bug."""
    if isinstance(exc, ApiError):
        return exc
    # A lost or refused connection, a server shutting down, a deadlock or serialization
    # failure: the transaction was rolled back, so the request changed nothing. Not a bug
    # (IntegrityError, ProgrammingError and DataError stay 500s).
    if isinstance(exc, OperationalError | InterfaceError):
        logger.warning("database unavailable: %s", type(exc.__cause__ or exc).__name__)
        return unavailable("database")
    if isinstance(exc, BrokerError):
        logger.warning("broker unavailable: %s", type(exc.__cause__ or exc).__name__)
        return unavailable("broker")
    if isinstance(exc, SuspiciousOperation | BadRequest | MultiPartParserError):
        return malformed_request(exc)
    if isinstance(exc, Http404):
        return ApiError(404, "not found")
    if isinstance(exc, PermissionDenied):
        return ApiError(403, "not allowed")
    if isinstance(exc, drf.ValidationError):
        return ApiError(422, "; ".join(_flatten_validation(exc.detail)) or "invalid request")
    if isinstance(exc, drf.ParseError):
        return ApiError(400, str(exc.detail))
    if isinstance(exc, drf.AuthenticationFailed | drf.NotAuthenticated):
        return ApiError(401, str(exc.detail), headers={"WWW-Authenticate": "Bearer"})
    if isinstance(exc, drf.PermissionDenied):
        return ApiError(403, str(exc.detail))
    if isinstance(exc, drf.MethodNotAllowed):
        return ApiError(405, str(exc.detail))
    if isinstance(exc, drf.UnsupportedMediaType):
        return ApiError(415, str(exc.detail))
    if isinstance(exc, drf.NotAcceptable):
        return ApiError(406, str(exc.detail))
    if isinstance(exc, drf.Throttled):
        return ApiError(429, str(exc.detail))
    if isinstance(exc, drf.NotFound):
        return ApiError(404, str(exc.detail))
    if isinstance(exc, drf.APIException):
        return ApiError(exc.status_code, str(exc.detail))
    return None


def exception_handler(exc: Exception, context: dict) -> Response:
    """DRF's exception handler: every exception becomes the envelope."""
    error = from_exception(exc)
    if error is None:
        logger.exception("unhandled error in %s", context.get("view").__class__.__name__)
        error = ApiError(500, "internal error")
    response = Response(error.as_dict(), status=error.status)
    for name, value in error.headers.items():
        response[name] = value
    return response


def json_error(error: ApiError) -> JsonResponse:
    response = JsonResponse(error.as_dict(), status=error.status)
    for name, value in error.headers.items():
        response[name] = value
    return response
