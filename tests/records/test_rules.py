"""One declaration per field: what the schema states of a provider's and a record's fields
is what their rules refuse, over REST and through the record tools alike."""

from __future__ import annotations

import pytest
from django.test import Client

from memoryhub.principals import Principal
from records.services.providers import MAX_TIMEOUT
from tests.conftest import error_of
from tests.memory_tools import execute_record_tool

URL = "/api/v1/memory-providers"


@pytest.fixture
def components(db) -> dict:
    response = Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return response.json()["components"]["schemas"]


@pytest.mark.parametrize("name", ["connect_timeout", "read_timeout"])
def test_a_timeout_is_documented_as_more_than_0_and_refused_at_0(owner, components, name):
    for component in ("MemoryProviderConfigRequest", "MemoryProviderConfig"):
        schema = components[component]["properties"][name]
        assert (schema["minimum"], schema["exclusiveMinimum"]) == (0, True)
        assert schema["maximum"] == MAX_TIMEOUT
    body = {"type": "mem0_oss", "name": "n", "config": {"base_url": "https://mem0.example"}}
    body["config"][name] = 0
    response = owner.post(URL, body)
    assert response.status_code == 422
    assert error_of(response)["message"] == (
        f"config.{name} is a number of seconds, more than 0 and at most {MAX_TIMEOUT:g}"
    )
    body["config"][name] = MAX_TIMEOUT
    assert owner.post(URL, body).status_code == 201


def test_the_bodies_refuse_what_their_schemas_leave_out(components):
    for component in (
        "MemoryProviderCreateRequest",
        "PatchedMemoryProviderChangeRequest",
        "MemoryProviderConfigRequest",
        "MemoryProviderCredentialRequest",
        "MemoryRecordWriteRequest",
        "PatchedMemoryRecordChangeRequest",
        "MemoryRecordSearchRequest",
    ):
        assert components[component]["additionalProperties"] is False, component


@pytest.mark.parametrize(
    ("name", "arguments", "path", "body", "message"),
    [
        ("memory_record_add", {"text": " "}, "", {"text": " "}, "text must be a non-empty string"),
        (
            "memory_record_add",
            {"text": "x", "metadata": []},
            "",
            {"text": "x", "metadata": []},
            "metadata must be an object",
        ),
        (
            "memory_record_search",
            {"query": "x", "k": True},
            "/search",
            {"query": "x", "k": True},
            "k is an integer from 1 to 100",
        ),
    ],
)
def test_rest_and_the_tools_refuse_a_value_with_one_message(
    running_run, runner, memory, name, arguments, path, body, message
):
    response = runner.post(f"/api/v1/memories/{memory.id}/records{path}", body)
    assert response.status_code == 422
    assert error_of(response)["message"] == message
    text = execute_record_tool(
        Principal.for_run(running_run[0]), memory, name=name, arguments=arguments
    )
    assert text == f"error: invalid_argument: {message}"


def test_a_provider_change_keeps_what_is_left_out(owner, platform_server):
    created = owner.post(
        URL,
        {
            "type": "mem0_platform",
            "name": "p",
            "config": {"base_url": platform_server.url, "read_timeout": 5},
            "credential": {"api_key": "m0-key"},
            "enabled": False,
        },
    ).json()
    response = owner.patch(f"{URL}/{created['id']}", {"name": " renamed "}, HTTP_IF_MATCH='"1"')
    assert response.status_code == 200, response.content
    changed = response.json()
    assert changed["name"] == "renamed"
    assert (changed["config"], changed["enabled"]) == (created["config"], False)
    assert changed["has_credential"] is True
