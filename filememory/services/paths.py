"""Path safety: a file path is a relative path of clean segments."""

from __future__ import annotations

from typing import Any

from memoryhub.errors import ApiError

MAX_PATH_BYTES = 1024
MAX_SEGMENT_BYTES = 255


def _is_control(char: str) -> bool:
    code = ord(char)
    return code < 32 or code == 127 or 0x80 <= code <= 0x9F


def clean_path(value: Any, field: str = "path") -> str:
    """The path itself when it is safe; 422 naming the problem otherwise.

    Refused: non-strings, empty paths, absolute paths, backslashes, NUL and other control
    characters, empty segments (``a//b``, a trailing ``/``), ``.`` and ``..`` segments,
    segments over 255 bytes and paths over 1024 bytes (UTF-8).
    """
    if not isinstance(value, str):
        raise ApiError(422, f"{field} must be a string")
    if not value:
        raise ApiError(422, f"{field} must not be empty")
    if value.startswith("/"):
        raise ApiError(422, f"{field} must be relative, such as notes/todo.md (not {value!r})")
    if "\\" in value:
        raise ApiError(422, f"{field} may not contain backslashes; separate folders with /")
    if any(_is_control(char) for char in value):
        raise ApiError(422, f"{field} may not contain NUL or other control characters")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise ApiError(422, f"{field} is not valid Unicode text") from None
    if size > MAX_PATH_BYTES:
        raise ApiError(422, f"{field} is at most {MAX_PATH_BYTES} bytes")
    for segment in value.split("/"):
        if segment == "":
            raise ApiError(422, f"{field} may not contain empty segments (// or a trailing /)")
        if segment in (".", ".."):
            raise ApiError(422, f"{field} may not contain '.' or '..' segments")
        if len(segment.encode("utf-8")) > MAX_SEGMENT_BYTES:
            raise ApiError(422, f"each segment of {field} is at most {MAX_SEGMENT_BYTES} bytes")
    return value


def clean_folder(value: Any, field: str = "path") -> str:
    """A folder prefix ending in ``/``, or ``""`` for the root (``""`` or ``/``)."""
    if value in ("", "/"):
        return ""
    if isinstance(value, str) and value.endswith("/"):
        value = value[:-1]
    return clean_path(value, field) + "/"
