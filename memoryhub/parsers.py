"""A strict JSON parser with a per-endpoint body limit.

A view may set ``max_body_bytes``; otherwise ``facts.max_body_bytes`` (64 KiB) applies.
Only ``application/json`` is parsed (anything else, wildcards included, is 415). Bodies
over the limit are 413; malformed JSON, NaN/Infinity, numbers out of range, nesting deeper
than :data:`MAX_DEPTH` and NUL characters are refused before any view code runs.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from rest_framework.parsers import BaseParser
from rest_framework.utils.mediatypes import _MediaType

from memoryhub.conf import setting
from memoryhub.errors import ApiError

# Arrays and objects inside one another: no document of memoryhub's needs more, and deeper
# values fail later: Python's JSON encoder and decoder recurse, so a value some 900 levels
# deep that parsed here could not be stored, or loaded again from a deeper stack (the admin
# page of a run: a 500).
MAX_DEPTH = 64
TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep"
DEPTH_RULE = f"JSON may nest arrays and objects at most {MAX_DEPTH} levels deep"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    # 1e400 would become Infinity, which no JSON (and no jsonb column) can hold.
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {text[:40]} is out of range")
    return value


def check_strings(value: Any, where: str = "") -> None:
    """422 for a value PostgreSQL cannot store or memoryhub will not: a NUL, a lone surrogate
    (``"\\ud800"``), or arrays and objects nested deeper than :data:`MAX_DEPTH`."""
    _check(value, where, 0)


def _check(value: Any, where: str, depth: int) -> None:
    if isinstance(value, str):
        if "\x00" in value:
            raise ApiError(422, f"{where or 'a string'} may not contain NUL characters")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ApiError(422, f"{where or 'a string'} is not valid Unicode") from None
        return
    if not isinstance(value, dict | list):
        return
    if depth >= MAX_DEPTH:
        raise ApiError(422, DEPTH_RULE)
    if isinstance(value, dict):
        for key, item in value.items():
            _check(key, where or "a key", depth)
            _check(item, f"{where}.{key}".lstrip(".") if isinstance(key, str) else where, depth + 1)
    else:
        for index, item in enumerate(value):
            _check(item, f"{where}[{index}]", depth + 1)


# A string, up to the end of the text if it is never closed, so that each string is read
# once: a pattern that failed on an unclosed string would rescan the rest from every quote
# after it (seconds for a 64 KiB body of escaped quotes).
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPENING = frozenset(b"[{")


def nesting_depth(data: bytes) -> int:
    """How deep arrays and objects nest in a JSON text, read without parsing it (brackets
    inside strings skipped), so that a deep document costs no recursion at all."""
    depth = deepest = 0
    for bracket in _STRING.sub(b"", data).translate(None, _NOT_BRACKETS):
        if bracket in _OPENING:
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def too_deep(data: bytes) -> bool:
    """Whether a JSON text nests deeper than :data:`MAX_DEPTH` (most texts have too few
    brackets to, and are not scanned at all)."""
    return data.count(b"[") + data.count(b"{") > MAX_DEPTH and nesting_depth(data) > MAX_DEPTH


def check_depth(data: bytes) -> None:
    """400 for a JSON text nested deeper than :data:`MAX_DEPTH`, before anything parses it
    (the REST parser, the MCP endpoint)."""
    if too_deep(data):
        raise ApiError(400, f"malformed JSON: {TOO_DEEP}")


def body_limit(view: Any) -> int:
    limit: int = getattr(view, "max_body_bytes", None) or setting("facts.max_body_bytes")
    return limit


def too_large(limit: int) -> ApiError:
    return ApiError(413, f"request body is larger than {limit} bytes")


def read_limited(stream: Any, limit: int) -> bytes:
    data = stream.read(limit + 1) if stream is not None else b""
    if len(data) > limit:
        raise too_large(limit)
    return data


def parse_json_bytes(data: bytes) -> Any:
    if not data.strip():
        return {}
    check_depth(data)
    try:
        value = json.loads(
            data.decode("utf-8"), parse_constant=_reject_constant, parse_float=_finite_float
        )
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ApiError(400, f"malformed JSON: {exc}") from None
    check_strings(value)
    return value


def is_json(media_type: str | None) -> bool:
    """``application/json`` itself (any parameters): DRF's negotiation also lets a wildcard
    such as ``*/*`` or ``application/*`` through to this parser, and those are not JSON."""
    if not media_type:
        return False
    kind = _MediaType(media_type)
    return (kind.main_type.lower(), kind.sub_type.lower()) == ("application", "json")


class StrictJSONParser(BaseParser):
    media_type = "application/json"

    def parse(
        self,
        stream: Any,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        if not is_json(media_type):
            raise ApiError(415, f'unsupported media type "{media_type}": send application/json')
        view = (parser_context or {}).get("view")
        request = (parser_context or {}).get("request")
        limit = body_limit(view)
        declared = request.META.get("CONTENT_LENGTH") if request is not None else None
        if declared and declared.isdigit() and int(declared) > limit:
            raise too_large(limit)
        return parse_json_bytes(read_limited(stream, limit))
