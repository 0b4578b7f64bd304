"""Malformed requests: always a clear 4xx in the error envelope, never a 500 or HTML."""

import json

import pytest

from memoryhub.models import Agent
from tests.conftest import error_of


def _post_raw(client, path, payload: bytes, content_type="application/json", **extra):
    return client.generic("POST", path, payload, content_type=content_type, **extra)


def test_malformed_json_is_400(owner):
    response = _post_raw(owner, "/api/v1/agents", b'{"name": ')
    assert response.status_code == 400
    assert error_of(response)["code"] == "bad_request"
    assert not Agent.objects.exists()


@pytest.mark.parametrize(
    "payload",
    [
        b'{"name": NaN}',
        b'{"name": Infinity}',
        b'{"name": "x", "toolset": {"n": 1e400}}',
        b'{"name": "x", "toolset": {"n": -1e400}}',
        b"\xff\xfe{}",
        b"[" * 50_000,
        b'{"name": "x"',
    ],
)
def test_json_that_is_not_json_is_400(owner, payload):
    response = _post_raw(owner, "/api/v1/agents", payload)
    assert response.status_code == 400, response.content
    assert error_of(response)["code"] == "bad_request"


def test_a_run_input_out_of_range_is_400_and_starts_no_run(owner, thread):
    from memoryhub.models import Run

    response = _post_raw(owner, f"/api/v1/threads/{thread.id}/runs", b'{"input": {"x": 1e400}}')
    assert response.status_code == 400, response.content
    assert "out of range" in error_of(response)["message"]
    assert not Run.objects.filter(thread=thread).exists()


def test_wrong_content_type_is_415(owner):
    response = _post_raw(owner, "/api/v1/agents", b"name=x", "application/x-www-form-urlencoded")
    assert response.status_code == 415
    assert error_of(response)["code"] == "unsupported_media_type"


def test_unknown_fields_are_422(owner):
    response = owner.post("/api/v1/agents", {"name": "x", "colour": "red"})
    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "invalid_argument"
    assert "colour" in error["message"]
    assert not Agent.objects.exists()


@pytest.mark.parametrize("payload", [[], "a string", 3, None])
def test_a_body_that_is_not_an_object_is_422(owner, payload):
    response = _post_raw(owner, "/api/v1/agents", json.dumps(payload).encode())
    assert response.status_code == 422


def test_wrong_types_are_422(owner):
    for body in (
        {"name": 3},
        {"name": ""},
        {"name": "x", "toolset": "on"},
        {"name": "x", "toolset": {"enabled": "yes"}},
        {"name": "x", "toolset": {"disabled_tools": ["rm_rf"]}},
        {"name": "x", "memory_mounts": {}},
    ):
        response = owner.post("/api/v1/agents", body)
        assert response.status_code == 422, (body, response.content)
    assert not Agent.objects.exists()


def test_a_body_over_64_kib_is_413(owner):
    payload = json.dumps({"name": "x" * (64 * 1024)}).encode()
    response = _post_raw(owner, "/api/v1/agents", payload)
    assert response.status_code == 413
    assert error_of(response)["code"] == "payload_too_large"
    assert not Agent.objects.exists()


def test_a_body_of_exactly_64_kib_is_read(owner):
    name = "x" * 100
    payload = json.dumps({"name": name}).encode()
    payload = payload[:-1] + b" " * (64 * 1024 - len(payload)) + b"}"
    assert len(payload) == 64 * 1024
    assert _post_raw(owner, "/api/v1/agents", payload).status_code == 201


def test_nul_characters_in_strings_are_422(owner):
    response = owner.post("/api/v1/agents", {"name": "bad\x00name"})
    assert response.status_code == 422
    assert not Agent.objects.exists()


def test_nul_characters_in_the_url_are_400(owner):
    assert owner.get("/api/v1/agents?name=%00").status_code == 400


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/agents/not-an-id",
        "/api/v1/agents/agt_",
        "/api/v1/agents/agt_doesnotexist",
        "/api/v1/agents/'%20OR%201=1",
        "/api/v1/threads/thr_x/nothing",
        "/api/v1/nothing",
        "/v0/nothing",
    ],
)
def test_bad_ids_and_unknown_paths_are_json_404(owner, path):
    response = owner.get(path)
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert error_of(response)["code"] == "not_found"


def test_a_wrong_method_is_405(owner, agent):
    response = owner.put(f"/api/v1/agents/{agent.id}", {"name": "x"})
    assert response.status_code == 405
    assert error_of(response)["code"] == "method_not_allowed"
    response = owner.delete("/api/v1/agents")
    assert response.status_code == 405


def test_every_answer_carries_a_request_id(owner):
    response = owner.get("/api/v1/agents", HTTP_X_REQUEST_ID="abc-123")
    assert response["X-Request-ID"] == "abc-123"
    response = owner.get("/api/v1/agents", HTTP_X_REQUEST_ID="bad id with spaces")
    assert response["X-Request-ID"] != "bad id with spaces"


@pytest.mark.parametrize(
    "payload",
    [b'{"name": "\\ud800"}', b'{"name": "ok", "toolset": {"disabled_tools": ["\\udfff"]}}'],
)
def test_lone_surrogates_are_422(owner, payload):
    response = _post_raw(owner, "/api/v1/agents", payload)
    assert response.status_code == 422
    assert not Agent.objects.exists()


def test_a_body_without_content_length_is_411(owner):
    response = _post_raw(
        owner,
        "/api/v1/agents",
        b'{"name": "x"}',
        CONTENT_LENGTH="",
        HTTP_TRANSFER_ENCODING="chunked",
    )
    assert response.status_code == 411
    assert error_of(response)["code"] == "length_required"
    assert not Agent.objects.exists()


@pytest.mark.parametrize("query", ["limit=%C2%B2", "offset=%C2%B2", "limit=%EF%BC%91"])
def test_non_ascii_digits_in_numbers_are_422(owner, query):
    assert owner.get(f"/api/v1/agents?{query}").status_code == 422


@pytest.mark.parametrize("memory_type", [[], {}, 3, None])
def test_a_type_of_the_wrong_json_type_is_422(owner, memory_type):
    response = owner.post("/api/v1/memories", {"name": "x", "type": memory_type})
    assert response.status_code == 422


def test_a_weak_etag_never_matches(owner, agent):
    response = owner.patch(f"/api/v1/agents/{agent.id}", {"name": "A"}, HTTP_IF_MATCH='W/"1"')
    assert response.status_code == 412


@pytest.mark.parametrize("path", ["/api/v1/agents", "/panel/"])
def test_a_host_not_allowed_is_400_and_one_log_line_without_a_traceback(owner, caplog, path):
    with caplog.at_level("INFO", logger="django.security"):
        response = owner.get(path, HTTP_HOST="evil.example")
    assert response.status_code == 400
    if path.startswith("/api/"):
        assert error_of(response)["code"] == "bad_request"
    [record] = [r for r in caplog.records if r.name == "django.security.DisallowedHost"]
    assert "evil.example" in record.getMessage()
    assert record.levelname == "WARNING"
    assert record.exc_info is None
