"""Which requests uvicorn refuses from their headers alone, before Django reads the body
(tests/deploy/test_refusals.py sends them to a live uvicorn)."""

import pytest
from django.conf import settings

from memoryhub.bodyguard import early_refusal

LIMIT = settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def _scope(path: str, **headers: str) -> dict:
    raw = [(name.replace("_", "-").encode(), value.encode()) for name, value in headers.items()]
    return {"type": "http", "path": path, "headers": raw}


@pytest.mark.parametrize("path", ["/api/v1/agents", "/v0/memory", "/panel/login/"])
def test_a_body_declared_over_the_largest_the_app_takes_is_413_on_every_path(path):
    refusal = early_refusal(_scope(path, content_length=str(LIMIT + 1)))
    assert refusal is not None
    assert refusal.as_dict()["error"] == {
        "code": "payload_too_large",
        "message": f"request body is larger than {LIMIT} bytes",
    }


@pytest.mark.parametrize("length", [str(LIMIT), "0", "12", "not-a-number"])
def test_other_lengths_are_left_to_the_app(length):
    assert early_refusal(_scope("/api/v1/agents", content_length=length)) is None


def test_a_chunked_body_is_411_on_the_api_only():
    assert early_refusal(_scope("/api/v1/agents", transfer_encoding="chunked")).status == 411
    assert early_refusal(_scope("/panel/login/", transfer_encoding="chunked")) is None


def test_websockets_and_lifespan_pass():
    assert early_refusal({"type": "websocket", "path": "/api/v1/agents", "headers": []}) is None
