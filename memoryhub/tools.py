"""The memory toolset's tool keys and permission ids (file-and-record-memory.md)."""

from memoryhub.errors import ApiError
from memoryhub.parsers import check_strings, parse_json_bytes

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
