"""Path safety: a file path is a relative path of clean segments.

The rules of the file path (the URL's ``file_path``, ``?path=``) and of a folder prefix
(``?prefix=``): :data:`FILE_PATH` and :data:`PREFIX`, checked by :func:`clean_path` and
:func:`clean_folder`.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from memoryhub.errors import ApiError
from memoryhub.rules import Rule

MAX_PATH_BYTES = 1024
MAX_SEGMENT_BYTES = 255

# clean_path as a pattern: segments of any characters but "/", "\\" and control characters
# (C0, DEL, C1), never "." or "..". The byte limits (MAX_SEGMENT_BYTES a segment,
# MAX_PATH_BYTES in all, UTF-8) count bytes; the pattern and maxLength can only count
# characters, so they are the upper bounds a client can check.
_SEGMENT = rf"(?!\.\.?(?:/|$))[^/\\\x00-\x1f\x7f-\x9f]{{1,{MAX_SEGMENT_BYTES}}}"
FILE_PATH_PATTERN = rf"^{_SEGMENT}(?:/{_SEGMENT})*$"
# clean_folder: "" or "/" for the root, else a path with at most one "/" after it.
FOLDER_PATTERN = rf"^(?:/?|{_SEGMENT}(?:/{_SEGMENT})*/?)$"


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


# A file's path: relative, such as prefs/language.md ("path" in the messages).
FILE_PATH = Rule(
    clean_path, {"type": "string", "maxLength": MAX_PATH_BYTES, "pattern": FILE_PATH_PATTERN}
)
# A folder whose files a listing shows: "" or "/" for all, else a clean path ("/" after it).
PREFIX = Rule(
    partial(clean_folder, field="prefix"),
    {"type": "string", "maxLength": MAX_PATH_BYTES + 1, "pattern": FOLDER_PATTERN},
)
