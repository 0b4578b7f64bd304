"""ETags from row versions, and the If-Match checks every resource with an ETag uses."""

from __future__ import annotations

from django.http import HttpRequest

from memoryhub.errors import ApiError


def etag_for(version: int) -> str:
    return f'"{version}"'


def _given(request: HttpRequest) -> str | None:
    meta = getattr(request, "META", {})
    value = meta.get("HTTP_IF_MATCH")
    return value.strip() if value is not None else None


def if_match_matches(value: str, current: str) -> bool:
    if value == "*":
        return True
    tags = [tag.strip() for tag in value.split(",")]
    return any(tag == current or tag.removeprefix("W/") == current for tag in tags)


def require_if_match(request: HttpRequest, version: int, **current_extra) -> int:
    """428 without If-Match, 412 when stale. Returns the version the caller based its change on."""
    value = _given(request)
    if value is None:
        raise ApiError(428, "this change needs an If-Match header with the current ETag")
    return check_if_match(value, version, **current_extra)


def check_if_match(value: str, version: int, **current_extra) -> int:
    if not if_match_matches(value, etag_for(version)):
        raise ApiError(
            412,
            "the object changed since it was read (stale If-Match)",
            etag=etag_for(version),
            **current_extra,
        )
    return version


def optional_if_match(request: HttpRequest) -> str | None:
    return _given(request)
