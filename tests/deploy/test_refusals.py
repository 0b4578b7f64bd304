"""A refusal sent before the request body was read (413, 411), on the servers the README
gives: gunicorn (``memoryhub.wsgi``) and uvicorn (``hub.asgi``). On a keep-alive
connection the next request is answered, or the refusal says ``Connection: close`` and the
connection ends after it; and the refusal comes at once, not after the whole body.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.core.management import call_command

from memoryhub.embedded import free_port
from memoryhub.services.workspaces import create_api_key, create_workspace
from support.servers import GUNICORN, server_environment
from support.workers import stop, wait_until_up

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

PROMPT = 5  # seconds
SERVERS = {
    "gunicorn": ["gunicorn", *GUNICORN, "--workers", "2", "--bind", "127.0.0.1:{port}"],
    "uvicorn": ["uvicorn", "hub.asgi:application", "--host", "127.0.0.1", "--port", "{port}"],
}


@pytest.fixture(scope="module")
def key(django_db_setup, django_db_blocker) -> Iterator[str]:
    with django_db_blocker.unblock():
        yield create_api_key(create_workspace("Refusals"), "write")[1]
        call_command("flush", verbosity=0, interactive=False)


@pytest.fixture(scope="module", params=sorted(SERVERS))
def port(request, key) -> Iterator[int]:
    port = free_port()
    command = [part.format(port=port) for part in SERVERS[request.param]]
    server = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        [sys.executable, "-m", *command, "--log-level", "warning"],
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


def _post(key: str, length: int | None) -> bytes:
    size = f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked"
    return (
        "POST /api/v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {key}\r\n{size}\r\n\r\n"
    ).encode()


def _then_usable_or_closed(conn: socket.socket) -> http.client.HTTPResponse:
    """The refusal on ``conn``; then the next request on it is answered, or the refusal
    said ``Connection: close`` and the server ends the connection."""
    refusal = http.client.HTTPResponse(conn)
    refusal.begin()
    body = json.loads(refusal.read())
    assert set(body) == {"error"}
    if (refusal.getheader("Connection") or "").lower() == "close":
        # A reset ends it all the same: the refusal was read whole first.
        with contextlib.suppress(ConnectionResetError):
            assert conn.recv(1) == b""
        return refusal
    conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    after = http.client.HTTPResponse(conn)
    after.begin()
    assert after.status == 200
    return refusal


@pytest.mark.parametrize("size", [70_000, 900_000])
def test_a_body_over_the_endpoints_limit_is_413_and_the_connection_stays_sane(port, key, size):
    body = json.dumps({"name": "x" * size}).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=PROMPT) as conn:
        conn.sendall(_post(key, len(body)) + body)
        assert _then_usable_or_closed(conn).status == 413


def test_a_chunked_body_is_411_and_the_connection_stays_sane(port, key):
    body = b'{"name": "chunked"}'
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    with socket.create_connection(("127.0.0.1", port), timeout=PROMPT) as conn:
        conn.sendall(_post(key, None) + chunked)
        assert _then_usable_or_closed(conn).status == 411


def test_a_body_over_the_apps_largest_is_refused_before_it_is_sent(port, key):
    """Not read to its end first: the refusal comes while the body is still unsent."""
    with socket.create_connection(("127.0.0.1", port), timeout=PROMPT) as conn:
        conn.sendall(_post(key, 50 * settings.DATA_UPLOAD_MAX_MEMORY_SIZE) + b'{"name": "')
        refusal = _then_usable_or_closed(conn)
    assert refusal.status == 413
    assert refusal.getheader("Connection") == "close"


def test_a_chunked_body_is_refused_before_it_ends(port, key):
    with socket.create_connection(("127.0.0.1", port), timeout=PROMPT) as conn:
        conn.sendall(_post(key, None) + b"10\r\n" + b'{"name": "chunk"')
        refusal = _then_usable_or_closed(conn)
    assert refusal.status == 411
    assert refusal.getheader("Connection") == "close"
