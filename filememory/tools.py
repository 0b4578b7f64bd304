"""The file tools the model gets for a mounted file memory.

The names and arguments are those of Anthropic's memory tool, which models already know:
``memory_file_view``, ``memory_file_create``, ``memory_file_str_replace``,
``memory_file_insert``, ``memory_file_rename`` and ``memory_file_delete``. Paths are
relative to the memory (``notes/todo.md``).

Every write is based on the version of the file this conversation last saw (the context
block, ``view``, or its own write): a write over a version it has not seen fails, changes
nothing and returns the current file, so the model reads it and decides again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from filememory.models import File, Revision
from filememory.services import seen
from filememory.services.files import audit_change
from filememory.services.paths import clean_folder, clean_path
from filememory.services.writes import (
    ABSENT,
    FILE_MEMORIES,
    Actor,
    Base,
    Writer,
    content_size,
    memory_gone,
    stale,
    writing,
)
from memoryhub.errors import ApiError
from memoryhub.models import Memory, Permission
from memoryhub.principals import Principal
from memoryhub.reasons import Code, Reason
from memoryhub.tools import (
    FILE_TOOL_KEYS,
    Argument,
    Tool,
    choice,
    tool_name,
    typed,
)

LISTING_LIMIT = 500  # lines of a folder listing
READ_KEYS = {"file_view"}  # the only tool a read-only mount gets


def _path(description: str = "Path relative to the memory, e.g. notes/todo.md") -> Argument:
    return Argument(typed("path", "string"), description, required=True)


def _text(name: str, description: str = "") -> Argument:
    return Argument(typed(name, "string"), description, required=True)


def _tool(key: str, description: str, arguments: dict[str, Argument], handler) -> Tool:
    permission = Permission.READ if key in READ_KEYS else Permission.RUN
    return Tool(tool_name(key), description, arguments, permission, handler)


def _tools() -> dict[str, Tool]:
    return {
        "file_view": _tool(
            "file_view",
            "Show a file of the memory with line numbers, or list the files of a folder "
            '(path "" or "/" lists the whole memory). Viewing a file lets you change it.',
            {
                "path": _path('File or folder path; "" for all'),
                "view_range": Argument(
                    typed(
                        "view_range",
                        "array",
                        items={"type": "integer"},
                        minItems=2,
                        maxItems=2,
                    ),
                    "Optional [first_line, last_line], 1-based; last_line -1 = end",
                ),
            },
            _view,
        ),
        "file_create": _tool(
            "file_create",
            "Create a file, or replace the whole content of a file you have viewed in its "
            "current version.",
            {"path": _path(), "file_text": _text("file_text", "The file's full content")},
            _create,
        ),
        "file_str_replace": _tool(
            "file_str_replace",
            "Replace text in a file you have viewed: old_str must occur exactly once; "
            "new_str is inserted literally.",
            {
                "path": _path(),
                "old_str": _text("old_str", "Exact text to replace (once)"),
                "new_str": _text("new_str", "Replacement text"),
            },
            _str_replace,
        ),
        "file_insert": _tool(
            "file_insert",
            "Insert text into a file you have viewed, after line insert_line (0 = at the top).",
            {
                "path": _path(),
                "insert_line": Argument(typed("insert_line", "integer", minimum=0), required=True),
                "insert_text": _text("insert_text"),
            },
            _insert,
        ),
        "file_rename": _tool(
            "file_rename",
            "Rename or move a file you have viewed to a path that has no file.",
            {"old_path": _path(), "new_path": _path()},
            _rename,
        ),
        "file_delete": _tool(
            "file_delete", "Delete a file you have viewed.", {"path": _path()}, _delete
        ),
    }


WRITE_KEYS = set(FILE_TOOL_KEYS) - READ_KEYS


def file_tools(
    mount_names: list[str] | None = None,
    access: str | dict[str, str] = "write",
    disabled: set[str] | frozenset[str] = frozenset(),
) -> list[Tool]:
    """The file tools offered over some mounts.

    ``mount_names``: the names of the mounted file memories; the tools then take a
    ``memory`` argument naming one of them. ``access``: ``read`` (only ``view``) or
    ``write`` (every tool), for all mounts or per mount name. ``disabled``: tool keys left
    out.
    """
    offered = []
    for key in FILE_TOOL_KEYS:
        if key in disabled:
            continue
        names = _mounts_for(key, mount_names, access)
        if names is not None and not names:
            continue
        tool = TOOLS[key]
        if names is not None:
            memory = choice("memory", names, "Mounted memory")
            tool = replace(tool, arguments={"memory": memory, **tool.arguments})
        offered.append(tool)
    return offered


def _mounts_for(key: str, mount_names, access) -> list[str] | None:
    def allowed(level: str) -> bool:
        return key not in WRITE_KEYS or level == "write"

    if mount_names is None:
        level = access if isinstance(access, str) else "read"
        return None if allowed(level) else []
    levels = access if isinstance(access, dict) else dict.fromkeys(mount_names, access)
    return [name for name in mount_names if allowed(levels.get(name, "read"))]


@dataclass(frozen=True)
class _Call:
    principal: Principal
    memory_id: str
    thread_id: str
    run_id: str | None
    tool_call_id: str | None

    def writing(self):
        actor = Actor(self.principal, self.run_id, self.tool_call_id)
        return writing(actor, self.memory_id, deleted_reason=Reason.MEMORY_DELETED)


def run_file_tool(
    principal: Principal,
    memory: Memory | str,
    tool: Tool,
    arguments: dict,
    *,
    thread_id: str,
    run_id: str | None,
    tool_call_id: str | None,
    access: str = "write",
) -> str:
    """Run one file tool with checked arguments; answers the tool message's content.

    Refusals come back as ``error: <code or reason>: <message>`` text (a stale write adds
    the current file); a failed call changes nothing.
    """
    call = _Call(
        principal,
        memory.id if isinstance(memory, Memory) else memory,
        thread_id,
        run_id,
        tool_call_id,
    )
    try:
        if tool.permission != Permission.READ and access != "write":
            raise ApiError(403, "this memory is mounted read-only", code=Code.FORBIDDEN)
        principal.require(tool.permission)  # the one check of the caller's permission
        return tool.handler(call, **arguments)
    except ApiError as error:
        return _error_text(error)


def _error_text(error: ApiError) -> str:
    text = error.as_tool_text()
    if error.status != 412 or "current" not in error.extra:
        return text
    current = error.extra["current"]
    if current is None:
        return text + "\nThere is no file at that path now."
    return (
        f"{text}\nThe current version ({current['version']}) of {current['path']} is:\n"
        f"{numbered(current['content'])}\n"
        "View the file with memory_file_view, then decide again."
    )


def numbered(content: str, first: int = 1, last: int | None = None) -> str:
    lines = content.split("\n")
    last = len(lines) if last is None else last
    return "\n".join(f"{n:6}\t{lines[n - 1]}" for n in range(first, last + 1))


def _memory(call: _Call) -> Memory:
    memory = FILE_MEMORIES.filter(workspace_id=call.principal.workspace_id, pk=call.memory_id)
    found = memory.first()
    if found is None:
        raise memory_gone(call.memory_id, Reason.MEMORY_DELETED)
    return found


def _is_folder(memory: Memory, path: str) -> bool:
    return File.objects.filter(memory=memory, path__startswith=path + "/").exists()


def _view(call: _Call, path: str, view_range: list | None = None) -> str:
    memory = _memory(call)
    if path not in ("", "/") and not path.endswith("/"):
        file = File.objects.filter(memory=memory, path=clean_path(path)).first()
        if file is not None:
            text = _show(file, view_range)
            seen.saw(call.thread_id, memory, file)
            return text
    if view_range is not None:
        raise ApiError(422, "view_range applies to a file, not a folder")
    return _listing(memory, clean_folder(path))


def _show(file: File, view_range: list | None) -> str:
    count = len(file.content.split("\n"))
    first, last = 1, count
    if view_range is not None:
        if len(view_range) != 2 or not all(
            isinstance(n, int) and not isinstance(n, bool) for n in view_range
        ):
            raise ApiError(422, "view_range is [first_line, last_line]")
        first, last = view_range
        last = count if last == -1 else last
        if not 1 <= first <= last <= count:
            raise ApiError(422, f"view_range must lie within lines 1-{count}")
    header = f"Here's the content of {file.path} (version {file.version}) with line numbers:"
    return f"{header}\n{numbered(file.content, first, last)}"


def _listing(memory: Memory, folder: str) -> str:
    files = list(
        File.objects.filter(memory=memory, path__startswith=folder)
        .order_by("path")
        .values_list("path", "size", "version")[: LISTING_LIMIT + 1]
    )
    where = folder or "the memory"
    if not files:
        if folder:
            raise ApiError(404, f"no file or folder at {folder[:-1]}")
        return "The memory has no files yet."
    lines = [f"- {path} ({size} bytes, version {version})" for path, size, version in files]
    if len(files) > LISTING_LIMIT:
        lines = lines[:LISTING_LIMIT] + ["- ... more files: view a folder to see them"]
    return f"Files in {where}:\n" + "\n".join(lines)


def _based(writer: Writer, call: _Call, path: str, tool: str) -> tuple[File, Base]:
    """The current file at ``path``, which the conversation must have seen as it is now."""
    current = writer.current(path)
    known = seen.lookup(call.thread_id, writer.memory, path)
    if current is None:
        if known is not None:
            raise stale(path, None, f"{path} was deleted since this conversation saw it")
        if _is_folder(writer.memory, path):
            raise ApiError(422, f"{path} is a folder; {tool} works on one file")
        raise ApiError(404, f"no file at {path}")
    base = seen.base_for(known, current, path)
    if base != Base.of(current):
        raise stale(path, current)
    return current, base


def _done(writer: Writer, call: _Call, action: str, file: File | None, path: str) -> None:
    if file is not None:
        seen.saw(call.thread_id, writer.memory, file)
    audit_change(writer, f"file.{action}", path, version=file.version if file else None)


def _create(call: _Call, path: str, file_text: str) -> str:
    path = clean_path(path)
    content_size(file_text, "file_text")
    with call.writing() as writer:
        current = writer.current(path)
        known = seen.lookup(call.thread_id, writer.memory, path)
        base = seen.base_for(known, current, path) if current or known else ABSENT
        action = Revision.Action.CREATE if base.absent else Revision.Action.UPDATE
        file = writer.put(path, file_text, base, action)
        _done(writer, call, action, file, path)
    if base.absent:
        return f"File created successfully at: {path}"
    return f"File {path} overwritten (now version {file.version})."


def _str_replace(call: _Call, path: str, old_str: str, new_str: str) -> str:
    path = clean_path(path)
    if not old_str:
        raise ApiError(422, "old_str must not be empty")
    with call.writing() as writer:
        current, base = _based(writer, call, path, "str_replace")
        count = current.content.count(old_str)
        if count != 1:
            where = "does not occur" if count == 0 else f"occurs {count} times"
            raise ApiError(422, f"old_str {where} in {path}; it must occur exactly once")
        # str.replace is literal: $&, \1 and the like are not patterns.
        content = current.content.replace(old_str, new_str, 1)
        content_size(content)
        file = writer.put(path, content, base, Revision.Action.UPDATE)
        _done(writer, call, "update", file, path)
    return f"The file {path} has been edited (now version {file.version})."


def _insert(call: _Call, path: str, insert_line: int, insert_text: str) -> str:
    path = clean_path(path)
    with call.writing() as writer:
        current, base = _based(writer, call, path, "insert")
        lines = current.content.split("\n")
        if not 0 <= insert_line <= len(lines):
            raise ApiError(422, f"insert_line must be between 0 and {len(lines)}")
        lines[insert_line:insert_line] = insert_text.split("\n")
        content = "\n".join(lines)
        content_size(content)
        file = writer.put(path, content, base, Revision.Action.UPDATE)
        _done(writer, call, "update", file, path)
    return f"Text inserted after line {insert_line} of {path} (now version {file.version})."


def _rename(call: _Call, old_path: str, new_path: str) -> str:
    old_path = clean_path(old_path, "old_path")
    new_path = clean_path(new_path, "new_path")
    if old_path == new_path:
        raise ApiError(422, "old_path and new_path are the same")
    with call.writing() as writer:
        current, base = _based(writer, call, old_path, "rename")
        content_size(current.content)  # a file over a since-lowered limit is not rewritten
        if writer.current(new_path) is not None:
            raise ApiError(409, f"a file exists at {new_path}", code=Code.ALREADY_EXISTS)
        action = Revision.Action.RENAME
        writer.remove(old_path, base, action, other_path=new_path)
        file = writer.put(new_path, current.content, ABSENT, action, other_path=old_path)
        seen.forget(call.thread_id, writer.memory, [old_path])
        seen.saw(call.thread_id, writer.memory, file)
        audit_change(writer, "file.rename", new_path, version=file.version, renamed_from=old_path)
    return f"Renamed {old_path} to {new_path}."


def _delete(call: _Call, path: str) -> str:
    path = clean_path(path)
    with call.writing() as writer:
        _current, base = _based(writer, call, path, "delete")
        writer.remove(path, base, Revision.Action.DELETE)
        seen.forget(call.thread_id, writer.memory, [path])
        _done(writer, call, "delete", None, path)
    return f"Deleted {path}."


TOOLS = _tools()
