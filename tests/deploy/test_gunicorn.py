"""gunicorn alone, as ``memoryhub.gunicorn_conf`` sets it up: what gunicorn refuses itself
(a request line or headers over its limits, a malformed request) answers memoryhub's JSON
envelope, not gunicorn's HTML page."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest
from django.conf import settings

from memoryhub.embedded import free_port
from support.servers import GUNICORN, answer, is_envelope, read_all, server_environment
from support.workers import stop, wait_until_up
from tests.deploy.test_nginx import PROMPT

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


@pytest.fixture(scope="module")
def port(django_db_setup) -> Iterator[int]:
    port = free_port()
    server = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        [sys.executable, "-m", "gunicorn", *GUNICORN, "--bind", f"127.0.0.1:{port}"],
        env=server_environment(),
        cwd=settings.BASE_DIR,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until_up(f"http://127.0.0.1:{port}", server)
        yield port
    finally:
        stop(server)


def _raw(port: int, head: str) -> tuple[int, str, dict]:
    with socket.create_connection(("127.0.0.1", port), timeout=PROMPT) as conn:
        conn.sendall(head.encode())
        return answer(read_all(conn))


@pytest.mark.parametrize("path", ["/api/v1/agents", "/v0/memory/search"])
def test_a_request_line_over_gunicorns_limit_is_the_json_414(port, path):
    status, content_type, body = _raw(port, f"GET {path}?q={'a' * 9000} HTTP/1.1\r\n\r\n")
    assert status == 414
    assert is_envelope(status, content_type, body)
    assert "8190" in body["error"]["message"]


def test_a_request_line_under_it_reaches_the_app(port):
    head = f"GET /api/v1/agents?q={'a' * 6000} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    status, content_type, body = _raw(port, head)
    assert status == 401  # the app's own answer: no credentials
    assert is_envelope(status, content_type, body)


def test_a_header_over_gunicorns_limit_is_the_json_431(port):
    head = f"GET /api/v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: {'a' * 9000}\r\n\r\n"
    status, content_type, body = _raw(port, head)
    assert status == 431
    assert is_envelope(status, content_type, body)


def test_a_malformed_request_line_is_the_json_400(port):
    status, content_type, body = _raw(port, "GET /api/v1/agents HTTP/1.1 extra\r\n\r\n")
    assert status == 400
    assert is_envelope(status, content_type, body)
