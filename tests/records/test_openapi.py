"""What the served schema says about records is what the record API does."""

from __future__ import annotations

import pytest
from django.test import Client

from records.services.records import MAX_LIST_OFFSET
from tests.conftest import error_of
from tests.records.conftest import record_memory

RECORD = "/api/v1/memories/{memory_id}/records/{record_id}"


@pytest.fixture
def schema(db) -> dict:
    response = Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return response.json()


def change_body(schema: dict) -> dict:
    body = schema["paths"][RECORD]["patch"]["requestBody"]["content"]["application/json"]
    ref = body["schema"]["$ref"].rsplit("/", 1)[1]
    return schema["components"]["schemas"][ref]


def test_a_change_of_nothing_is_refused_as_documented(schema, runner, tenant, oss_provider):
    body = change_body(schema)
    assert body["minProperties"] == 1 and not body.get("required")
    memory = record_memory(tenant, oss_provider)
    base = f"/api/v1/memories/{memory.id}/records"
    record = runner.post(base, {"text": "Prefers metric units"}).json()
    assert runner.patch(f"{base}/{record['id']}", {}).status_code == 422
    # Either field alone is a change: text is not required when changing.
    changed = runner.patch(f"{base}/{record['id']}", {"metadata": {"k": 1}})
    assert changed.status_code == 200, changed.content


def test_the_offset_of_records_says_its_maximum(schema, reader, tenant, oss_provider):
    query = {p["name"]: p for p in schema["paths"][RECORD.rsplit("/", 1)[0]]["get"]["parameters"]}
    assert query["offset"]["schema"]["maximum"] == MAX_LIST_OFFSET
    memory = record_memory(tenant, oss_provider)
    response = reader.get(f"/api/v1/memories/{memory.id}/records?offset={MAX_LIST_OFFSET + 1}")
    assert response.status_code == 422
    assert error_of(response)["message"] == (
        f"offset must be a whole number from 0 to {MAX_LIST_OFFSET}"
    )
