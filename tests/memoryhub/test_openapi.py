"""The served schema documents every operation's errors with the one envelope, and the
promises it makes about requests are the ones the API keeps."""

from __future__ import annotations

import pytest
from django.test import Client

from memoryhub.api.pagination import MAX_OFFSET
from memoryhub.schema import ERROR_DESCRIPTIONS
from tests.conftest import error_of

ERROR_REF = {"$ref": "#/components/schemas/Error"}
_SCHEMA: dict = {}


@pytest.fixture
def schema(db) -> dict:
    if not _SCHEMA:
        response = Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
        assert response.status_code == 200
        _SCHEMA.update(response.json())
    return _SCHEMA


def operations(schema: dict):
    for path, methods in schema["paths"].items():
        for method, op in methods.items():
            yield path, method, op


def errors_of(schema: dict, path: str, method: str) -> set[int]:
    return {int(s) for s in schema["paths"][path][method]["responses"] if s >= "400"}


# -- the envelope -------------------------------------------------------------------------
def test_every_error_of_every_operation_is_the_one_error_component(schema):
    for path, method, op in operations(schema):
        errors = [status for status in op["responses"] if status >= "400"]
        assert errors, (method, path)
        for status in errors:
            answer = op["responses"][status]
            assert answer["content"] == {"application/json": {"schema": ERROR_REF}}
            assert answer["description"], (method, path, status)
    error = schema["components"]["schemas"]["Error"]
    assert error["required"] == ["error"]
    detail = schema["components"]["schemas"]["ErrorDetail"]
    assert sorted(detail["required"]) == ["code", "message"]
    # The extra fields memoryhub.errors adds: a stale write's etag and current, a 503's
    # dependency and provider_id.
    assert {"reason", "etag", "current", "dependency", "provider_id"} <= set(detail["properties"])


def test_what_every_request_can_meet_is_documented_everywhere(schema):
    for path, method, _ in operations(schema):
        # NUL in the URL (400), credentials (401), an Accept without JSON (406), a chunked
        # body without Content-Length (411).
        assert {400, 401, 406, 411} <= errors_of(schema, path, method), (method, path)


def test_statuses_follow_from_the_operation(schema):
    # Path parameters: 404. Query parameters and bodies: 422. Bodies: 413 and 415.
    assert 404 in errors_of(schema, "/api/v1/agents/{agent_id}", "get")
    assert 404 not in errors_of(schema, "/api/v1/agents", "get")
    assert 422 in errors_of(schema, "/api/v1/agents", "get")
    assert 422 not in errors_of(schema, "/api/v1/agents/{agent_id}", "get")
    assert {413, 415, 422} <= errors_of(schema, "/api/v1/agents", "post")
    assert not {413, 415} & errors_of(schema, "/api/v1/agents/{agent_id}", "delete")
    # Every key may read: reading is never 403; writing with read < write is.
    assert 403 not in errors_of(schema, "/api/v1/agents", "get")
    assert 403 in errors_of(schema, "/api/v1/agents", "post")
    # If-Match: required means 428 and 412; optional only 412.
    assert {412, 428} <= errors_of(schema, "/api/v1/agents/{agent_id}", "patch")
    archive = errors_of(schema, "/api/v1/threads/{thread_id}/archive", "post")
    assert 412 in archive and 428 not in archive
    # What a view adds: a conflict, a backend.
    assert 409 in errors_of(schema, "/api/v1/memory-providers/{provider_id}", "delete")
    assert 409 not in errors_of(schema, "/api/v1/agents/{agent_id}", "delete")
    assert 503 in errors_of(schema, "/api/v1/memory-providers/{provider_id}/test", "post")
    assert 503 in errors_of(schema, "/api/v1/memories/{memory_id}/records", "get")
    assert 503 not in errors_of(schema, "/api/v1/memories/{memory_id}/files", "get")
    assert 403 in errors_of(schema, "/api/v1/runs/{run_id}/end", "post")
    assert 404 in errors_of(schema, "/v0/memory/facts", "post")  # replaces


def test_no_status_without_a_description_of_it():
    assert set(ERROR_DESCRIPTIONS) == {
        400,
        401,
        403,
        404,
        406,
        409,
        411,
        412,
        413,
        415,
        422,
        428,
        503,
    }


# -- what the schema promises about requests ------------------------------------------------
@pytest.mark.parametrize("content_type", ["*/*", "application/*", "text/plain", "*/json"])
def test_only_json_is_json(owner, content_type):
    """The README promises 415 for anything but JSON; DRF alone took wildcards as JSON."""
    response = owner.generic("POST", "/api/v1/agents", b'{"name": "x"}', content_type=content_type)
    assert response.status_code == 415, response.content
    assert error_of(response)["code"] == "unsupported_media_type"


def test_json_with_parameters_is_json(owner):
    response = owner.generic(
        "POST", "/api/v1/agents", b'{"name": "x"}', content_type="Application/JSON; charset=utf-8"
    )
    assert response.status_code == 201, response.content


def test_an_empty_body_needs_no_content_type(owner, thread):
    response = owner.generic("POST", f"/api/v1/threads/{thread.id}/archive", b"", content_type="")
    assert response.status_code == 200, response.content


def test_an_accept_without_json_is_406_in_the_envelope(owner):
    response = owner.get("/api/v1/agents", HTTP_ACCEPT="text/html")
    assert response.status_code == 406
    assert error_of(response)["code"] == "not_acceptable"


def test_offsets_have_the_documented_maximum(schema, owner):
    for path in ("/api/v1/agents", "/api/v1/threads", "/api/v1/memories", "/api/v1/end-users"):
        query = {p["name"]: p for p in schema["paths"][path]["get"]["parameters"]}
        assert query["offset"]["schema"]["maximum"] == MAX_OFFSET
    assert owner.get(f"/api/v1/agents?offset={MAX_OFFSET}").json()["results"] == []
    for offset in (MAX_OFFSET + 1, 10**30, "-1", "1.5"):
        response = owner.get(f"/api/v1/agents?offset={offset}")
        assert response.status_code == 422
        assert (
            error_of(response)["message"] == f"offset must be a whole number from 0 to {MAX_OFFSET}"
        )
    assert owner.get("/api/v1/agents?offset=0000000007").status_code == 200


def test_limits_say_their_range(owner):
    response = owner.get("/api/v1/agents?limit=201")
    assert response.status_code == 422
    assert error_of(response)["message"] == "limit must be a whole number from 1 to 200"


def test_request_bodies_say_that_unknown_fields_are_refused(schema, owner):
    open_objects = {"FactToolCallEnvelopeRequest", "FactToolCallFunctionRequest"}
    open_objects.add("RunToolCallFunctionRequest")  # an OpenAI tool call's other keys
    for name, component in schema["components"]["schemas"].items():
        if name.endswith("Request"):
            assert component.get("additionalProperties") is (
                None if name in open_objects else False
            ), name
    response = owner.post("/api/v1/agents", {"name": "x", "colour": "red"})
    assert response.status_code == 422
    assert "colour" in error_of(response)["message"]
