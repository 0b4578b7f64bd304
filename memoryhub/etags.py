"""ETags from row versions, and the If-Match check every resource with an ETag uses.

A missing If-Match where one is required is 428 (``memoryhub.api.base.if_match``); a stale
one is 412 here.
"""

from __future__ import annotations

from typing import Any

from memoryhub.errors import ApiError


def etag_for(version: int) -> str:
    return f'"{version}"'


def if_match_matches(value: str, current: str) -> bool:
    if value.strip() == "*":
        return True
    # Strong comparison (RFC 9110): a weak tag (W/"...") never matches.
    return current in [tag.strip() for tag in value.split(",")]


def check_if_match(value: str, version: int, **current_extra: Any) -> int:
    """412 unless ``value`` names ``version``; returns the version the change is based on."""
    if not if_match_matches(value, etag_for(version)):
        raise ApiError(
            412,
            "the object changed since it was read (stale If-Match)",
            etag=etag_for(version),
            **current_extra,
        )
    return version
