"""The file tools the model gets: Anthropic's memory-tool arguments, conversation bases."""

from __future__ import annotations

import json

import pytest

from filememory.models import File, Revision
from filememory.representations import file_etag
from filememory.services.files import put_file
from filememory.services.writes import Actor
from filememory.tools import file_tools
from memoryhub.models import AuditEvent
from memoryhub.principals import Principal
from memoryhub.services.memories import delete_memory
from memoryhub.tools import FILE_TOOL_KEYS
from tests.memory_tools import execute_file_tool
from threads.services.runs import end_run

NAMES = [f"memory_{key}" for key in FILE_TOOL_KEYS]


def file_tool_definitions(*args, **kwargs) -> list[dict]:
    """What a run is offered: the OpenAI function definitions of the file tools."""
    return [tool.definition() for tool in file_tools(*args, **kwargs)]


def state(memory):
    """Everything a failed call must leave as it was."""
    files = sorted(File.objects.filter(memory=memory).values_list("path", "version", "content"))
    memory.refresh_from_db()
    return files, Revision.objects.filter(memory=memory).count(), memory.content_bytes


# Definitions


def test_definitions_for_one_memory():
    definitions = file_tool_definitions()
    assert [d["function"]["name"] for d in definitions] == NAMES
    assert all(d["type"] == "function" for d in definitions)
    params = {d["function"]["name"]: d["function"]["parameters"] for d in definitions}
    assert params["memory_file_view"]["required"] == ["path"]
    assert set(params["memory_file_view"]["properties"]) == {"path", "view_range"}
    assert params["memory_file_create"]["required"] == ["path", "file_text"]
    assert params["memory_file_str_replace"]["required"] == ["path", "old_str", "new_str"]
    assert params["memory_file_insert"]["required"] == ["path", "insert_line", "insert_text"]
    assert params["memory_file_rename"]["required"] == ["old_path", "new_path"]
    assert params["memory_file_delete"]["required"] == ["path"]


def test_definitions_per_mount_and_access():
    definitions = file_tool_definitions(["team", "notes"], {"team": "write", "notes": "read"})
    by_name = {d["function"]["name"]: d["function"]["parameters"] for d in definitions}
    assert by_name["memory_file_view"]["properties"]["memory"]["enum"] == ["team", "notes"]
    assert by_name["memory_file_create"]["properties"]["memory"]["enum"] == ["team"]
    assert by_name["memory_file_create"]["required"][0] == "memory"
    read_only = file_tool_definitions(["notes"], "read")
    assert [d["function"]["name"] for d in read_only] == ["memory_file_view"]
    assert [d["function"]["name"] for d in file_tool_definitions(access="read")] == [
        "memory_file_view"
    ]
    without = file_tool_definitions(disabled={"file_delete", "file_view"})
    assert [d["function"]["name"] for d in without] == NAMES[1:-1]


# The two conversations


def test_two_conversations_never_overwrite_each_other(tenant, memory, converse):
    put_file(Actor(tenant.owner), memory.id, "prefs.md", "Metric units.", None)
    a, b = converse(), converse()
    assert "Metric units." in a.tool("memory_file_view", path="prefs.md")
    assert "Metric units." in b.tool("memory_file_view", path="prefs.md")
    assert "overwritten" in b.tool("memory_file_create", path="prefs.md", file_text="Imperial.")
    before = state(memory)

    answer = a.tool("memory_file_create", path="prefs.md", file_text="Metric, always.")
    assert answer.startswith("error: precondition_failed: ")
    assert "Imperial." in answer and "version (2)" in answer
    assert state(memory) == before

    assert "Imperial." in a.tool("memory_file_view", path="prefs.md")
    answer = a.tool("memory_file_create", path="prefs.md", file_text="Metric, always.")
    assert "overwritten" in answer
    file = File.objects.get(memory=memory, path="prefs.md")
    assert (file.content, file.version) == ("Metric, always.", 3)
    revisions = Revision.objects.filter(memory=memory).order_by("id")
    assert [(r.run_id, r.content) for r in revisions] == [
        (None, "Metric units."),
        (b.run.id, "Imperial."),
        (a.run.id, "Metric, always."),
    ]


def test_write_over_a_file_never_seen_fails(tenant, memory, converse):
    put_file(Actor(tenant.owner), memory.id, "a.md", "by a person", None)
    c = converse()
    before = state(memory)
    for name, args in [
        ("memory_file_create", {"path": "a.md", "file_text": "x"}),
        ("memory_file_str_replace", {"path": "a.md", "old_str": "person", "new_str": "x"}),
        ("memory_file_insert", {"path": "a.md", "insert_line": 0, "insert_text": "x"}),
        ("memory_file_rename", {"old_path": "a.md", "new_path": "b.md"}),
        ("memory_file_delete", {"path": "a.md"}),
    ]:
        answer = c.tool(name, **args)
        assert answer.startswith("error: precondition_failed: "), (name, answer)
        assert "has not read it yet" in answer and "by a person" in answer
    assert state(memory) == before


def test_changes_by_people_make_the_conversation_stale(tenant, memory, converse):
    first, _ = put_file(Actor(tenant.owner), memory.id, "a.md", "one", None)
    c = converse()
    c.tool("memory_file_view", path="a.md")
    put_file(Actor(tenant.owner), memory.id, "a.md", "two", file_etag(first))
    answer = c.tool("memory_file_str_replace", path="a.md", old_str="one", new_str="1")
    assert answer.startswith("error: precondition_failed:") and "two" in answer


def test_deleted_under_the_conversation(tenant, memory, converse):
    first, _ = put_file(Actor(tenant.owner), memory.id, "a.md", "one", None)
    c = converse()
    c.tool("memory_file_view", path="a.md")
    from filememory.services.files import delete_file

    delete_file(Actor(tenant.owner), memory.id, "a.md", file_etag(first))
    answer = c.tool("memory_file_create", path="a.md", file_text="again")
    assert answer.startswith("error: precondition_failed:")
    assert "no file at that path now" in answer
    answer = c.tool("memory_file_delete", path="a.md")
    assert answer.startswith("error: precondition_failed:")
    assert not File.objects.filter(memory=memory).exists()


# view


def test_view_file_with_line_numbers_and_ranges(memory, converse):
    c = converse()
    c.tool("memory_file_create", path="a.md", file_text="one\ntwo\nthree")
    answer = c.tool("memory_file_view", path="a.md")
    assert answer.splitlines() == [
        "Here's the content of a.md (version 1) with line numbers:",
        "     1\tone",
        "     2\ttwo",
        "     3\tthree",
    ]
    assert c.tool("memory_file_view", path="a.md", view_range=[2, 2]).splitlines()[1:] == [
        "     2\ttwo"
    ]
    assert c.tool("memory_file_view", path="a.md", view_range=[2, -1]).count("\n") == 2
    for bad in ([0, 1], [2, 1], [1, 9], [1], ["1", 2], [True, 2]):
        answer = c.tool("memory_file_view", path="a.md", view_range=bad)
        assert answer.startswith("error: invalid_argument:"), bad


def test_view_folders(memory, converse):
    c = converse()
    assert c.tool("memory_file_view", path="") == "The memory has no files yet."
    for path in ("notes/a.md", "notes/deep/b.md", "top.md"):
        c.tool("memory_file_create", path=path, file_text=path)
    listing = c.tool("memory_file_view", path="/")
    assert "- notes/a.md (10 bytes, version 1)" in listing and "top.md" in listing
    listing = c.tool("memory_file_view", path="notes")
    assert "notes/deep/b.md" in listing and "top.md" not in listing
    assert c.tool("memory_file_view", path="notes/").startswith("Files in notes/")
    assert c.tool("memory_file_view", path="nope").startswith("error: not_found:")
    answer = c.tool("memory_file_view", path="notes", view_range=[1, 1])
    assert answer.startswith("error: invalid_argument:")


@pytest.mark.parametrize("path", ["../x.md", "/abs.md", "a//b", "a\\b", "a\x00b", "a\nb"])
def test_unsafe_paths(memory, converse, path):
    c = converse()
    for name, args in [
        ("memory_file_view", {"path": path}),
        ("memory_file_create", {"path": path, "file_text": "x"}),
        ("memory_file_rename", {"old_path": "a.md", "new_path": path}),
    ]:
        assert c.tool(name, **args).startswith("error: invalid_argument:"), name
    assert not File.objects.exists()


# create / str_replace / insert / rename / delete


def test_create_records_run_and_tool_call(memory, converse):
    c = converse()
    assert c.tool("memory_file_create", path="a.md", file_text="x") == (
        "File created successfully at: a.md"
    )
    revision = Revision.objects.get(memory=memory)
    assert revision.run_id == c.run.id and revision.tool_call_id == "call_1"
    assert revision.principal_id == c.run.id and revision.principal_type == "run"
    event = AuditEvent.objects.get(action="file.create")
    assert event.details["run_id"] == c.run.id and event.details["tool_call_id"] == "call_1"
    # Its own write is what the conversation has seen: it may write again.
    assert "overwritten" in c.tool("memory_file_create", path="a.md", file_text="y")


def test_str_replace(memory, converse):
    c = converse()
    c.tool("memory_file_create", path="a.md", file_text="alpha beta alpha gamma")
    answer = c.tool("memory_file_str_replace", path="a.md", old_str="beta", new_str="$& \\1 $1")
    assert "edited" in answer
    assert File.objects.get(path="a.md").content == "alpha $& \\1 $1 alpha gamma"
    before = state(memory)
    assert "occurs 2 times" in c.tool(
        "memory_file_str_replace", path="a.md", old_str="alpha", new_str="x"
    )
    assert "does not occur" in c.tool(
        "memory_file_str_replace", path="a.md", old_str="delta", new_str="x"
    )
    assert c.tool("memory_file_str_replace", path="a.md", old_str="", new_str="x").startswith(
        "error: invalid_argument:"
    )
    assert c.tool("memory_file_str_replace", path="nope.md", old_str="a", new_str="b").startswith(
        "error: not_found:"
    )
    assert state(memory) == before


def test_insert(memory, converse):
    c = converse()
    c.tool("memory_file_create", path="a.md", file_text="one\ntwo")
    c.tool("memory_file_insert", path="a.md", insert_line=0, insert_text="zero")
    c.tool("memory_file_insert", path="a.md", insert_line=2, insert_text="one and a half")
    c.tool("memory_file_insert", path="a.md", insert_line=4, insert_text="three")
    assert File.objects.get(path="a.md").content == "zero\none\none and a half\ntwo\nthree"
    before = state(memory)
    for line in (-1, 6):
        answer = c.tool("memory_file_insert", path="a.md", insert_line=line, insert_text="x")
        assert answer.startswith("error: invalid_argument:")
    answer = c.tool("memory_file_insert", path="a.md", insert_line=True, insert_text="x")
    assert answer.startswith("error: invalid_argument:")
    assert state(memory) == before


def test_rename(memory, converse):
    c = converse()
    c.tool("memory_file_create", path="a.md", file_text="content")
    c.tool("memory_file_create", path="taken.md", file_text="t")
    assert c.tool("memory_file_rename", old_path="a.md", new_path="b/c.md") == (
        "Renamed a.md to b/c.md."
    )
    assert sorted(File.objects.values_list("path", flat=True)) == ["b/c.md", "taken.md"]
    revisions = Revision.objects.filter(action="rename").order_by("id")
    assert [(r.path, r.other_path, r.content) for r in revisions] == [
        ("a.md", "b/c.md", None),
        ("b/c.md", "a.md", "content"),
    ]
    # The renamed file is seen by the conversation that renamed it.
    assert "overwritten" in c.tool("memory_file_create", path="b/c.md", file_text="new")
    before = state(memory)
    answer = c.tool("memory_file_rename", old_path="b/c.md", new_path="taken.md")
    assert answer.startswith("error: already_exists:")
    assert c.tool("memory_file_rename", old_path="b", new_path="d").startswith(
        "error: invalid_argument:"
    )
    assert c.tool("memory_file_rename", old_path="taken.md", new_path="taken.md").startswith(
        "error: invalid_argument:"
    )
    assert c.tool("memory_file_rename", old_path="zz.md", new_path="y.md").startswith(
        "error: not_found:"
    )
    assert state(memory) == before


def test_delete(memory, converse):
    c = converse()
    c.tool("memory_file_create", path="notes/a.md", file_text="x")
    assert c.tool("memory_file_delete", path="notes").startswith("error: invalid_argument:")
    assert c.tool("memory_file_delete", path="notes/a.md") == "Deleted notes/a.md."
    assert not File.objects.exists()
    assert c.tool("memory_file_delete", path="notes/a.md").startswith("error: not_found:")
    # Having seen it deleted (its own delete), it may create the path again.
    assert c.tool("memory_file_create", path="notes/a.md", file_text="y").startswith("File created")
    memory.refresh_from_db()
    assert memory.file_count == 1


def test_file_too_large(memory, converse):
    from tests.filememory.conftest import limits

    c = converse()
    with limits(max_file_bytes=10):
        answer = c.tool("memory_file_create", path="a.md", file_text="x" * 11)
        assert answer.startswith("error: file_too_large:")
        c.tool("memory_file_create", path="b.md", file_text="x" * 10)
        answer = c.tool("memory_file_insert", path="b.md", insert_line=0, insert_text="y")
        assert answer.startswith("error: file_too_large:")
    assert File.objects.get(path="b.md").content == "x" * 10


def test_memory_full(memory, converse):
    from tests.filememory.conftest import limits

    c = converse()
    with limits(max_total_bytes=10):
        answer = c.tool("memory_file_create", path="a.md", file_text="x" * 11)
    assert answer.startswith("error: memory_full:")
    assert not File.objects.exists()


# Arguments, access, permissions


def test_arguments(memory, converse):
    c = converse()
    call = dict(thread_id=c.thread.id, run_id=c.run.id, tool_call_id="t1")
    answer = execute_file_tool(
        c.principal,
        memory.id,
        name="memory_file_create",
        arguments=json.dumps({"memory": "team", "path": "a.md", "file_text": "x"}),
        **call,
    )
    assert answer.startswith("File created")
    for arguments, words in [
        ("{nope", "not valid JSON"),
        ("[1]", "JSON object"),
        ({"path": "a.md"}, "missing arguments: file_text"),
        ({"path": "a.md", "file_text": "x", "mode": "w"}, "unknown arguments: mode"),
        ({"path": 1, "file_text": "x"}, "path must be a string"),
    ]:
        answer = execute_file_tool(
            c.principal, memory, name="memory_file_create", arguments=arguments, **call
        )
        assert answer.startswith("error: invalid_argument:") and words in answer, answer


def test_read_access_and_read_permission(tenant, memory, converse):
    c = converse()
    answer = c.tool("memory_file_create", access="read", path="a.md", file_text="x")
    assert answer.startswith("error: forbidden:")
    assert c.tool("memory_file_view", access="read", path="") == "The memory has no files yet."
    reader = Principal.for_api_key(tenant.workspace.api_keys.get(permission="read"))
    c.principal = reader
    assert c.tool("memory_file_create", path="a.md", file_text="x").startswith("error: forbidden:")
    assert c.tool("memory_file_view", path="") == "The memory has no files yet."
    assert not File.objects.exists()


def test_ended_run_can_only_read(tenant, memory, converse):
    c = converse()
    c.tool("memory_file_create", path="a.md", file_text="x")
    end_run(tenant.owner, c.run.id)
    c.run.refresh_from_db()
    c.principal = Principal.for_run(c.run)
    assert c.tool("memory_file_view", path="a.md").startswith("Here's the content")
    answer = c.tool("memory_file_create", path="a.md", file_text="y")
    assert answer.startswith("error: run_ended:")


def test_deleted_memory(tenant, memory, converse, other_tenant):
    c = converse()
    c.tool("memory_file_create", path="a.md", file_text="x")
    delete_memory(tenant.owner, memory.id, '"1"')
    for name, args in [
        ("memory_file_view", {"path": "a.md"}),
        ("memory_file_create", {"path": "b.md", "file_text": "x"}),
        ("memory_file_delete", {"path": "a.md"}),
    ]:
        assert c.tool(name, **args).startswith("error: memory_deleted: "), name
