"""What every memory tool is: :class:`Tool` (its name, description, arguments, the
permission it needs and its handler), the toolset's keys (file-and-record-memory.md), and
the OpenAI tool call a runtime sends back (``tool_call``).

Facts, file and record tools are all declared as :class:`Tool`; a tool's arguments are
:class:`~memoryhub.rules.Rule`s, so one declaration gives the function definition the model
sees and the check of what it sends back (:meth:`Tool.check`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from memoryhub.errors import ApiError
from memoryhub.models import Permission
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


# -- the tools -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Argument:
    """One argument of a tool: its rule, what the model reads of it, and whether it's needed."""

    rule: Rule
    description: str = ""
    required: bool = False
    # Left out, the rule's own refusal says more than "missing" (it lists what to choose).
    rule_explains_missing: bool = False

    def schema(self) -> dict[str, Any]:
        return self.rule.argument(self.description or None)


def typed(name: str, json_type: str, **schema: Any) -> Rule:
    """A rule that takes a JSON value of one type only (never a boolean for a number)."""
    python = {"string": str, "integer": int, "array": list, "object": dict}[json_type]

    def check(value: object) -> Any:
        if not isinstance(value, python) or isinstance(value, bool):
            raise ApiError(422, f"{name} must be a {json_type}")
        return value

    return Rule(check, {"type": json_type, **schema})


def choice(name: str, values: list[str], description: str) -> Argument:
    """A required argument that names one of ``values`` (a mount, a folder)."""

    def check(value: object) -> str:
        if value not in values:
            raise ApiError(422, f"{name} must be one of: {', '.join(values)}")
        return value

    rule = Rule(check, {"type": "string", "enum": list(values)})
    return Argument(rule, description, required=True, rule_explains_missing=True)


@dataclass(frozen=True)
class Tool:
    """A tool the model can call."""

    name: str  # the function name the model sees
    description: str
    arguments: dict[str, Argument]
    permission: Permission  # what the credential needs to run it (read, or run to write)
    handler: Callable[..., str] = field(compare=False)  # gets the checked arguments

    def with_arguments(self, first: dict[str, Argument]) -> Tool:
        """The tool with more arguments before its own (``memory``, ``path``)."""
        return replace(self, arguments={**first, **self.arguments})

    def definition(self) -> dict[str, Any]:
        """The OpenAI function definition."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": {name: a.schema() for name, a in self.arguments.items()},
                    "required": [name for name, a in self.arguments.items() if a.required],
                    "additionalProperties": False,
                },
            },
        }

    def check(self, raw: object) -> dict[str, Any]:
        """The arguments the model sent, checked: unknown, then missing, then each in turn."""
        arguments = parse_arguments(raw)
        unknown = sorted(set(arguments) - set(self.arguments))
        if unknown:
            raise ApiError(422, f"unknown arguments: {', '.join(unknown)}")
        missing = [n for n, a in self.arguments.items() if a.required and n not in arguments]
        plain = [n for n in missing if not self.arguments[n].rule_explains_missing]
        if plain:
            raise ApiError(422, f"missing arguments: {', '.join(plain)}")
        for name in missing:  # a choice left out: its rule lists what to choose from
            self.arguments[name].rule(None)
        return {name: self.arguments[name].rule(value) for name, value in arguments.items()}
