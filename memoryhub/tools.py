"""The memory toolset's tool keys and permission ids (file-and-record-memory.md)."""

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

MOUNT_NAME_PATTERN = r"^[a-z][a-z0-9-]{0,62}$"


def tool_name(key: str) -> str:
    """``file_view`` -> ``memory_file_view``: the function name the model sees."""
    return "memory_" + key


def permission_id(key: str) -> str:
    """``file_view`` -> ``memory.file.view``."""
    kind, _, action = key.partition("_")
    return f"memory.{kind}.{action}"
