"""The served OpenAPI schema documents the wire contract of agents, end users, the memories
catalog, threads, mounts, runs and tool calls (what a client generator relies on)."""

import re

import pytest
from django.test import Client

from memoryhub.tools import TOOL_KEYS


@pytest.fixture
def schema(db):
    response = Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return response.json()


def resolve(schema: dict, node: dict) -> dict:
    """Follow a $ref, or the single $ref of an allOf wrapper (a $ref with a description)."""
    while True:
        if "$ref" in node:
            node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
        elif len(node.get("allOf", ())) == 1:
            node = {**node["allOf"][0], **{k: v for k, v in node.items() if k != "allOf"}}
        else:
            return node


def operation(schema: dict, path: str, method: str) -> dict:
    return schema["paths"][path][method]


def request_body(schema: dict, op: dict) -> dict:
    return resolve(schema, op["requestBody"]["content"]["application/json"]["schema"])


def successes(op: dict) -> list[str]:
    """The statuses an operation answers when it works (the rest are documented errors)."""
    return [status for status in op["responses"] if status < "400"]


def response_body(schema: dict, op: dict, status: str) -> dict:
    assert successes(op) == [status]
    return resolve(schema, op["responses"][status]["content"]["application/json"]["schema"])


def parameters(op: dict, where: str) -> dict:
    return {p["name"]: p for p in op.get("parameters", []) if p["in"] == where}


def enum_of(schema: dict, node: dict) -> list:
    return resolve(schema, node)["enum"]


def test_accepting_a_run_documents_its_body_and_the_token_answer(schema):
    op = operation(schema, "/api/v1/threads/{thread_id}/runs", "post")
    body = request_body(schema, op)
    assert set(body["properties"]) == {
        "input",
        "parent_run_id",
        "eval",
        "history_compacted",
        "inline",
    }
    assert not body.get("required")
    assert body["properties"]["eval"]["type"] == "boolean"
    assert body["properties"]["inline"]["default"] is False

    accepted = response_body(schema, op, "201")
    assert {"id", "thread_id", "status", "token", "mounts", "context", "tools"} <= set(
        accepted["required"]
    )
    assert enum_of(schema, accepted["properties"]["status"]) == ["running", "ended"]
    mount = resolve(schema, accepted["properties"]["mounts"]["items"])
    assert set(mount["required"]) == {"name", "memory_id", "kind", "access", "recall"}
    tool = resolve(schema, accepted["properties"]["tools"]["items"])
    assert enum_of(schema, tool["properties"]["type"]) == ["function"]


def test_get_and_end_run_answer_the_run_without_its_token(schema):
    for path, method in (("/api/v1/runs/{run_id}", "get"), ("/api/v1/runs/{run_id}/end", "post")):
        run = response_body(schema, operation(schema, path, method), "200")
        assert "token" not in run["properties"]
        assert run["properties"]["ended_at"]["nullable"] is True


def test_listing_threads_documents_filters_pagination_and_the_page(schema):
    op = operation(schema, "/api/v1/threads", "get")
    query = parameters(op, "query")
    assert set(query) == {"agent_id", "end_user", "status", "limit", "offset"}
    assert query["status"]["schema"]["enum"] == ["active", "archived"]
    page = response_body(schema, op, "200")
    assert set(page["required"]) == {"count", "next", "previous", "results"}
    thread = resolve(schema, page["properties"]["results"]["items"])
    assert {"id", "agent_id", "end_user", "status", "forked_from", "etag"} <= set(
        thread["required"]
    )


def test_creating_a_thread_needs_only_agent_id(schema):
    op = operation(schema, "/api/v1/threads", "post")
    body = request_body(schema, op)
    assert body["required"] == ["agent_id"]
    assert set(body["properties"]) == {"agent_id", "end_user", "memories"}
    assert body["properties"]["end_user"]["maxLength"] == 100
    assert "ETag" in op["responses"]["201"]["headers"]


def test_mount_changes_require_if_match_and_answer_the_mounts(schema):
    path = "/api/v1/threads/{thread_id}/memories"
    op = operation(schema, path, "post")
    assert parameters(op, "header")["If-Match"]["required"] is True
    body = request_body(schema, op)
    assert sorted(body["required"]) == ["memory_id", "name"]
    assert body["properties"]["name"]["pattern"] == "^[a-z][a-z0-9-]{0,62}$"
    assert enum_of(schema, body["properties"]["access"]) == ["read", "write"]
    assert body["properties"]["access"]["default"] == "read"
    assert body["properties"]["recall"]["default"] is True
    answer = response_body(schema, op, "201")
    assert set(answer["required"]) == {"memories", "etag"}

    for method in ("patch", "delete"):
        op = operation(schema, path + "/{name}", method)
        assert parameters(op, "header")["If-Match"]["required"] is True
        assert response_body(schema, op, "200") == answer
    change = request_body(schema, operation(schema, path + "/{name}", "patch"))
    assert set(change["properties"]) == {"access", "recall"}


def test_archiving_takes_an_optional_if_match(schema):
    op = operation(schema, "/api/v1/threads/{thread_id}/archive", "post")
    assert not parameters(op, "header")["If-Match"].get("required")
    assert "requestBody" not in op


def test_a_tool_call_takes_an_id_and_answers_the_tool_message(schema):
    op = operation(schema, "/api/v1/runs/{run_id}/tool-calls", "post")
    body = request_body(schema, op)
    assert body["required"] == ["id"]
    assert body["properties"]["id"]["maxLength"] == 200
    assert {"name", "arguments", "type", "function"} <= set(body["properties"])
    arguments = body["properties"]["arguments"]["oneOf"]
    assert [a["type"] for a in arguments] == ["object", "string"]
    message = response_body(schema, op, "200")
    assert set(message["required"]) == {"role", "tool_call_id", "content"}
    assert enum_of(schema, message["properties"]["role"]) == ["tool"]


def test_agents_document_their_fields_toolset_and_if_match(schema):
    create = operation(schema, "/api/v1/agents", "post")
    body = request_body(schema, create)
    assert body["required"] == ["name"]
    assert body["properties"]["name"]["maxLength"] == 200
    toolset = resolve(schema, body["properties"]["toolset"])
    assert enum_of(schema, toolset["properties"]["disabled_tools"]["items"]) == TOOL_KEYS
    agent = response_body(schema, create, "201")
    assert {"id", "name", "toolset", "memory_mounts", "etag"} <= set(agent["required"])

    patch = operation(schema, "/api/v1/agents/{agent_id}", "patch")
    assert not request_body(schema, patch).get("required")
    delete = operation(schema, "/api/v1/agents/{agent_id}", "delete")
    assert parameters(delete, "header")["If-Match"]["required"] is True
    assert successes(delete) == ["204"]
    assert set(parameters(operation(schema, "/api/v1/agents", "get"), "query")) == {
        "limit",
        "offset",
    }


def test_end_users_are_listed_and_erased(schema):
    page = response_body(schema, operation(schema, "/api/v1/end-users", "get"), "200")
    end_user = resolve(schema, page["properties"]["results"]["items"])
    assert set(end_user["properties"]) == {"id", "created_at"}
    erase = operation(schema, "/api/v1/end-users/{end_user}", "delete")
    assert successes(erase) == ["200"]
    receipt = resolve(schema, response_body(schema, erase, "200"))
    assert {"facts", "versions", "threads_archived", "verified", "remaining"} <= set(
        receipt["properties"]
    )


def test_the_memories_catalog_documents_filters_create_and_patch(schema):
    listing = operation(schema, "/api/v1/memories", "get")
    query = parameters(listing, "query")
    assert query["label"]["schema"]["type"] == "array" and query["label"]["explode"] is True
    assert set(query["kind"]["schema"]["enum"]) == {"file", "record"}
    assert {"postgres", "mem0_platform", "mem0_oss"} == set(query["type"]["schema"]["enum"])
    memory = resolve(schema, response_body(schema, listing, "200")["properties"]["results"])
    memory = resolve(schema, memory["items"])
    assert memory["properties"]["file_count"]["nullable"] is True
    assert {"inherited_guide", "kind", "type", "etag"} <= set(memory["required"])

    create = request_body(schema, operation(schema, "/api/v1/memories", "post"))
    assert create["required"] == ["name"]
    assert create["properties"]["type"]["default"] == "postgres"
    assert {"provider_id", "namespace", "always_load", "guide"} <= set(create["properties"])
    assert create["properties"]["labels"]["maxItems"] == 32
    assert create["properties"]["always_load"]["maxItems"] == 64

    patch_op = operation(schema, "/api/v1/memories/{memory_id}", "patch")
    patch = request_body(schema, patch_op)
    assert set(patch["properties"]) == {"name", "description", "labels", "guide", "always_load"}
    assert parameters(patch_op, "header")["If-Match"]["required"] is True


def test_the_status_filter_takes_only_its_documented_enum(schema, owner, thread):
    op = operation(schema, "/api/v1/threads", "get")
    assert parameters(op, "query")["status"]["schema"]["enum"] == ["active", "archived"]
    refused = owner.get("/api/v1/threads?status=AAA")
    assert refused.status_code == 422
    assert "status must be one of: active, archived" in refused.json()["error"]["message"]
    assert [t["id"] for t in owner.get("/api/v1/threads?status=active").json()["results"]] == [
        thread.id
    ]
    assert owner.get("/api/v1/threads?status=archived").json()["results"] == []


def test_end_users_of_new_threads_follow_the_documented_pattern(schema, owner, agent):
    body = request_body(schema, operation(schema, "/api/v1/threads", "post"))
    pattern = body["properties"]["end_user"]["pattern"]
    for end_user, valid in (("alice", True), ("a.b:c@d-e_f", True), ("a b", False), ("", False)):
        assert bool(re.search(pattern, end_user)) is valid
        response = owner.post("/api/v1/threads", {"agent_id": agent.id, "end_user": end_user})
        assert (response.status_code == 201) is valid, response.content
