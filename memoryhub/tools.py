"""The memory toolset's tool keys and permission ids (file-and-record-memory.md), and the
OpenAI tool call a runtime sends back (``tool_call``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memoryhub.errors import ApiError
from memoryhub.parsers import check_strings, parse_json_bytes
from memoryhub.rules import Rule

FILE_TOOL_KEYS = [
    "file_view",
    "file_create",
    "file_str_replace",
    "file_insert",
    "file_rename",
    "file_delete",
]
RECORD_TOOL_KEYS = [
    "record_search",
    "record_list",
    "record_add",
    "record_update",
    "record_delete",
]
TOOL_KEYS = FILE_TOOL_KEYS + RECORD_TOOL_KEYS

MOUNT_NAME_PATTERN = r"^[a-z][a-z0-9-]{0,62}$"  # matched with re.fullmatch
MAX_TOOL_CALL_ID = 200  # characters of an OpenAI tool call id


def tool_name(key: str) -> str:
    """``file_view`` -> ``memory_file_view``: the function name the model sees."""
    return "memory_" + key


def permission_id(key: str) -> str:
    """``file_view`` -> ``memory.file.view``."""
    kind, _, action = key.partition("_")
    return f"memory.{kind}.{action}"


def parse_arguments(raw: object) -> dict:
    """A tool call's arguments: a JSON object, or a JSON string of one (as OpenAI sends).

    A string goes through the request parser's rules (no NaN, NUL or lone surrogates).
    """
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if isinstance(raw, str):
        try:
            raw = parse_json_bytes(raw.encode("utf-8"))
        except UnicodeEncodeError:
            raise ApiError(422, "the arguments are not valid Unicode") from None
        except ApiError as error:
            raise ApiError(422, f"the arguments are not valid JSON ({error.message})") from None
    else:
        check_strings(raw)
    if not isinstance(raw, dict):
        raise ApiError(422, "the arguments must be a JSON object")
    return raw


@dataclass(frozen=True)
class ToolCall:
    """One call of the model: its id, the function's name and its (raw) arguments."""

    id: str
    name: str
    arguments: Any  # a JSON object, or a JSON string of one: see parse_arguments


def tool_call(value: object) -> ToolCall:
    """``{"id", "type": "function", "function": {"name", "arguments"}}`` (422 otherwise)."""
    if not isinstance(value, dict):
        raise ApiError(422, "tool_call must be an OpenAI tool call object")
    call_id, function = value.get("id"), value.get("function")
    if not isinstance(call_id, str) or not 1 <= len(call_id) <= MAX_TOOL_CALL_ID:
        raise ApiError(422, f"tool_call.id is 1-{MAX_TOOL_CALL_ID} characters")
    if value.get("type", "function") != "function":
        raise ApiError(422, "tool_call.type must be function")
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise ApiError(422, "tool_call.function must be {name, arguments}")
    return ToolCall(call_id, function["name"], function.get("arguments"))


# An OpenAI tool call as the model produced it; its other keys are read past.
TOOL_CALL = Rule(
    tool_call,
    {
        "type": "object",
        "properties": {
            "id": {"type": "string", "minLength": 1, "maxLength": MAX_TOOL_CALL_ID},
            "type": {"type": "string", "enum": ["function"], "default": "function"},
            "function": {
                "type": "object",
                "properties": {
                    "name": {
                        "type": "string",
                        "description": "An unknown tool answers an error text, not an HTTP error.",
                    },
                    "arguments": {
                        "description": "A JSON object, or a JSON string of one (as OpenAI sends)."
                    },
                },
                "required": ["name"],
            },
        },
        "required": ["id", "function"],
    },
    component="ToolCall",
)
