"""The record tools: definitions and execution, with every refusal as tool text."""

from __future__ import annotations

import json
import uuid

import pytest

from memoryhub.models import AuditEvent, Memory
from memoryhub.principals import Principal
from memoryhub.tools import RECORD_TOOL_KEYS
from records import tools
from tests.memory_tools import execute_record_tool


@pytest.fixture
def run_principal(running_run) -> Principal:
    return Principal.for_run(running_run[0])


def call(principal, memory, name, arguments, **extra) -> str:
    return execute_record_tool(
        principal,
        memory,
        run_id=getattr(principal.run, "id", None),
        tool_call_id="call_1",
        name=name,
        arguments=arguments,
        **extra,
    )


def test_definitions_name_each_tool_with_a_json_schema():
    definitions = [tools.tool(key).definition() for key in RECORD_TOOL_KEYS]
    names = [d["function"]["name"] for d in definitions]
    assert names == [
        "memory_record_search",
        "memory_record_list",
        "memory_record_add",
        "memory_record_update",
        "memory_record_delete",
    ]
    for definition in definitions:
        assert definition["type"] == "function"
        parameters = definition["function"]["parameters"]
        assert parameters["type"] == "object"
        assert parameters["additionalProperties"] is False
        assert set(parameters["required"]) <= set(parameters["properties"])


def test_a_definition_can_take_the_mount_names():
    definition = tools.tool("record_search", memories=["prefs", "team"]).definition()
    parameters = definition["function"]["parameters"]
    assert parameters["properties"]["memory"]["enum"] == ["prefs", "team"]
    assert parameters["required"] == ["memory", "query"]


def test_add_search_list_update_delete_through_the_tools(run_principal, memory):
    added = json.loads(call(run_principal, memory, "memory_record_add", {"text": "Likes tea"}))
    assert added["text"] == "Likes tea"
    found = json.loads(
        call(run_principal, memory, "memory_record_search", json.dumps({"query": "tea"}))
    )
    assert [r["id"] for r in found["results"]] == [added["id"]]
    listed = json.loads(call(run_principal, memory, "memory_record_list", {"limit": 5}))
    assert listed["count"] == 1
    updated = json.loads(
        call(
            run_principal,
            memory,
            "memory_record_update",
            {"record_id": added["id"], "text": "Likes green tea"},
        )
    )
    assert updated["text"] == "Likes green tea"
    deleted = call(run_principal, memory, "memory_record_delete", {"record_id": added["id"]})
    assert json.loads(deleted) == {"deleted": added["id"]}
    events = AuditEvent.objects.filter(object_type="record").order_by("id")
    assert [e.action for e in events] == ["record.add", "record.update", "record.delete"]
    assert events[0].principal_type == "run"
    assert events[0].details["tool_call"] == "call_1"


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("memory_record_fly", {}, "error: invalid_argument:"),
        ("memory_file_view", {}, "error: invalid_argument:"),
        ("memory_record_add", "{oops", "error: invalid_argument: the arguments are not valid"),
        ("memory_record_add", [], "error: invalid_argument:"),
        ("memory_record_add", {}, "error: invalid_argument: missing arguments: text"),
        ("memory_record_add", {"text": "x", "colour": 1}, "error: invalid_argument: unknown"),
        ("memory_record_add", {"text": "x" * 8001}, "error: invalid_argument:"),
        ("memory_record_search", {"query": "x", "k": 0}, "error: invalid_argument:"),
        ("memory_record_update", {"record_id": str(uuid.uuid4()), "text": "x"}, "error: not_found"),
        ("memory_record_delete", {"record_id": 5}, "error: invalid_argument:"),
    ],
)
def test_refusals_are_tool_text(run_principal, memory, name, arguments, expected):
    assert call(run_principal, memory, name, arguments).startswith(expected)


def test_a_read_mount_offers_reading_only(run_principal, memory, server_of):
    text = call(run_principal, memory, "memory_record_add", {"text": "x"}, access="read")
    assert text.startswith("error: forbidden:")
    assert server_of(memory.provider).requests == []
    listed = call(run_principal, memory, "memory_record_list", {}, access="read")
    assert json.loads(listed)["count"] == 0


def test_a_deleted_memory_answers_memory_deleted(run_principal, memory):
    memory_id = memory.id
    Memory.objects.filter(pk=memory_id).delete()
    assert call(run_principal, memory, "memory_record_list", {}).startswith(
        "error: memory_deleted:"
    )
    assert call(run_principal, memory_id, "memory_record_add", {"text": "x"}).startswith(
        "error: memory_deleted:"
    )


def test_a_disabled_provider_answers_unavailable(run_principal, memory, server_of):
    memory.provider.enabled = False
    memory.provider.save()
    text = call(run_principal, memory, "memory_record_search", {"query": "x"})
    assert text.startswith("error: unavailable:")
    assert server_of(memory.provider).requests == []


def test_a_backend_failure_is_tool_text_not_an_exception(run_principal, memory, server_of):
    server_of(memory.provider).drop_after_write = True
    text = call(run_principal, memory, "memory_record_add", {"text": "maybe"})
    assert text.startswith("error: write_unconfirmed:")
    server_of(memory.provider).fail(503)
    assert call(run_principal, memory, "memory_record_list", {}).startswith("error: unavailable:")


def test_an_ended_run_may_read_but_not_write(tenant, ended_run, memory):
    principal = Principal.for_run(ended_run[0])
    assert call(principal, memory, "memory_record_add", {"text": "x"}).startswith(
        "error: run_ended:"
    )
    assert json.loads(call(principal, memory, "memory_record_list", {}))["count"] == 0


def test_a_read_key_cannot_write(tenant, memory):
    from memoryhub.models import ApiKey

    key = ApiKey.objects.get(workspace=tenant.workspace, permission="read")
    text = call(Principal.for_api_key(key), memory, "memory_record_add", {"text": "x"})
    assert text.startswith("error: forbidden:")


def test_another_workspace_memory_is_memory_deleted(other_tenant, memory):
    text = call(other_tenant.owner, memory, "memory_record_list", {})
    assert text.startswith("error: memory_deleted:")
