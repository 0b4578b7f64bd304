"""Request ids, JSON answers for anything that goes wrong outside DRF on the API paths, and
the client's address behind a proxy."""

from __future__ import annotations

import ipaddress
import logging
import re
import uuid
from collections.abc import Callable
from functools import cache

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from memoryhub.audit import current_request_id
from memoryhub.errors import ApiError, from_exception, json_error

logger = logging.getLogger(__name__)

API_PREFIXES = ("/api/", "/v0/")
_REQUEST_ID_RE = re.compile(r"[A-Za-z0-9._:-]{1,64}")


def length_required() -> ApiError:
    # Django reads a body without Content-Length as empty: refuse it, never guess.
    return ApiError(411, "send the request body with a Content-Length")


@cache
def _proxies(allowed: tuple[str, ...]) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(entry, strict=False) for entry in allowed if entry != "*")


def _is_proxy(address: str) -> bool:
    """Whether ``address`` is one of settings.FORWARDED_ALLOW_IPS (addresses or networks)."""
    allowed = tuple(settings.FORWARDED_ALLOW_IPS)
    if "*" in allowed:
        return True
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in _proxies(allowed))


def client_address(request: HttpRequest) -> str:
    """The address of the client a request comes from, as the proxies in front saw it.

    A request from a trusted proxy (settings.FORWARDED_ALLOW_IPS, the list gunicorn and
    uvicorn trust) is read from its ``X-Forwarded-For``, right to left: the first entry that
    is no trusted proxy is the client. Entries further left are whatever the client sent.
    """
    address: str = request.META.get("REMOTE_ADDR", "")
    if not _is_proxy(address):
        return address
    forwarded: str = request.META.get("HTTP_X_FORWARDED_FOR", "")
    hops = [hop.strip() for hop in forwarded.split(",")]
    hops = [hop for hop in hops if hop]
    for hop in reversed(hops):
        if not _is_proxy(hop):
            return hop[:64]
    # Every hop trusted ("*"): the rightmost is what the nearest proxy wrote; those to its
    # left may be the client's own invention.
    return hops[-1][:64] if hops else address


def is_api_path(path: str) -> bool:
    return path.startswith(API_PREFIXES) and not path.startswith(("/api/docs", "/api/schema"))


class RequestIdMiddleware:
    """Takes a sane ``X-Request-ID`` from the caller or makes one; echoes it back."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        given = request.headers.get("X-Request-ID", "")
        request_id = given if _REQUEST_ID_RE.fullmatch(given) else uuid.uuid4().hex
        token = current_request_id.set(request_id)
        try:
            response = self.get_response(request)
        finally:
            current_request_id.reset(token)
        response["X-Request-ID"] = request_id
        return response


class ApiGuardMiddleware:
    """On /api/ and /v0/: no HTML error pages and no 500 from malformed requests."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not is_api_path(request.path):
            return self.get_response(request)
        if "\x00" in request.path or "%00" in request.META.get("QUERY_STRING", ""):
            return json_error(ApiError(400, "NUL characters are not allowed in URLs"))
        if request.META.get("HTTP_TRANSFER_ENCODING") and not request.META.get("CONTENT_LENGTH"):
            return json_error(length_required())
        response = self.get_response(request)
        if response.status_code >= 400 and not _is_json(response):
            return json_error(ApiError(response.status_code, _status_text(response)))
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not is_api_path(request.path):
            return None
        error = from_exception(exception)
        if error is None:
            # The route, not the path: a path can hold a person's id (erased later, never
            # from the logs) as in DELETE /api/v1/end-users/<id>.
            route = getattr(request.resolver_match, "route", "") or "an unresolved path"
            logger.exception("unhandled error on %s %s", request.method, route)
            error = ApiError(500, "internal error")
        return json_error(error)


def _is_json(response: HttpResponse) -> bool:
    return response.get("Content-Type", "").startswith("application/json")


def _status_text(response: HttpResponse) -> str:
    return getattr(response, "reason_phrase", "") or "error"
