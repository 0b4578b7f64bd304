"""The production setup of the README, live: Debian's nginx with ``deploy/nginx.conf`` in
front of gunicorn (the API) and uvicorn (``/mcp``), on the test database.

Slow clients are nginx's to wait for; what nginx refuses itself answers the app's JSON
envelope; a bad ``Host`` is a 400 without a traceback in the log.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from django.conf import settings
from django.core.management import call_command

from memoryhub.embedded import free_port
from memoryhub.services.workspaces import create_api_key, create_workspace
from support.servers import (
    GUNICORN,
    NGINX,
    answer,
    is_envelope,
    nginx_prefix,
    read_all,
    server_environment,
    start_nginx,
)
from support.workers import stop, wait_until_up
from tests.mcp.conftest import headers_for, http_client, run_async

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

SLOW_CLIENTS = 50
PROMPT = 5  # seconds: what "still answers" means while the slow clients trickle


@dataclass
class Stack:
    url: str
    keys: dict[str, str]
    gunicorn_log: Path
    port: int

    def raw(self, head: bytes, body: bytes = b"") -> bytes:
        """What the proxy answers ``head`` (+ ``body``) on a connection of its own."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=PROMPT) as conn:
            conn.sendall(head + body)
            return read_all(conn)


def _gunicorn(port: int, log: Path) -> subprocess.Popen:
    # The README's production command, with two sync workers as on a small machine.
    command = [sys.executable, "-m", "gunicorn", *GUNICORN, "--workers", "2"]
    return subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        [*command, "--bind", f"127.0.0.1:{port}", "--log-level", "warning"],
        env=server_environment(),
        cwd=settings.BASE_DIR,
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
    )


def _uvicorn(port: int) -> subprocess.Popen:
    command = [sys.executable, "-m", "uvicorn", "hub.asgi:application"]
    return subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        [*command, "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
        env=server_environment(),
        cwd=settings.BASE_DIR,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


@pytest.fixture(scope="module")
def stack(django_db_setup, django_db_blocker) -> Iterator[Stack]:
    if not os.access(NGINX, os.X_OK):
        pytest.fail("these tests need Debian's nginx: apt-get install nginx")
    with django_db_blocker.unblock():
        workspace = create_workspace("Behind nginx")
        keys = {p: create_api_key(workspace, p)[1] for p in ("read", "run", "write")}
    prefix = nginx_prefix()
    web, mcp, port = free_port(), free_port(), free_port()
    servers = [_gunicorn(web, prefix / "gunicorn.log"), _uvicorn(mcp)]
    try:
        servers.append(start_nginx(prefix, port, web, mcp))
        url = f"http://127.0.0.1:{port}"
        wait_until_up(url, servers[2])
        yield Stack(url, keys, prefix / "gunicorn.log", port)
    finally:
        for server in reversed(servers):
            stop(server)
        shutil.rmtree(prefix, ignore_errors=True)
        with django_db_blocker.unblock():
            call_command("flush", verbosity=0, interactive=False)


def _trickler(stack: Stack, number: int) -> tuple[socket.socket, bytes]:
    """A client that sent its headers and has its body still to send."""
    body = json.dumps({"name": f"slow-{number:02}"}).encode()
    head = (
        "POST /api/v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {stack.keys['write']}\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    conn = socket.create_connection(("127.0.0.1", stack.port), timeout=30)
    conn.sendall(head)
    return conn, body


def test_fifty_slow_clients_leave_normal_requests_answered_and_get_their_answers(stack):
    clients = [_trickler(stack, number) for number in range(SLOW_CLIENTS)]
    read = {"Authorization": f"Bearer {stack.keys['read']}"}
    answered = []
    try:
        # Each slow client sends a byte of its body at a time, all of them for seconds
        # (two sync workers would each be held by one of them, without the proxy).
        longest = max(len(body) for _, body in clients)
        for offset in range(longest):
            for conn, body in clients:
                conn.sendall(body[offset : offset + 1])
            health = requests.get(stack.url + "/healthz", timeout=PROMPT)
            agents = requests.get(stack.url + "/api/v1/agents", headers=read, timeout=PROMPT)
            answered.append((health.status_code, agents.status_code))
            time.sleep(0.1)
        statuses = [read_all(conn).split(b" ", 2)[1] for conn, _ in clients]
    finally:
        for conn, _ in clients:
            conn.close()
    assert set(answered) == {(200, 200)}
    assert statuses == [b"201"] * SLOW_CLIENTS  # each slow request done, none killed
    listed = requests.get(stack.url + "/api/v1/agents?limit=100", headers=read, timeout=PROMPT)
    assert sum(a["name"].startswith("slow-") for a in listed.json()["results"]) == SLOW_CLIENTS


@pytest.mark.parametrize("path", ["/api/v1/agents", "/v0/memory/search"])
def test_a_request_line_too_long_is_the_json_414(stack, path):
    head = f"GET {path}?q={'a' * 5000} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    status, content_type, body = answer(stack.raw(head))
    assert status == 414
    assert is_envelope(status, content_type, body)
    assert body["error"]["code"] == "uri_too_long"


@pytest.mark.parametrize("size", [5000, 12 * 1024])
def test_a_header_too_long_is_the_json_431(stack, size):
    head = f"GET /api/v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: {'a' * size}\r\n\r\n"
    status, content_type, body = answer(stack.raw(head.encode()))
    assert status == 431
    assert is_envelope(status, content_type, body)


def test_too_many_headers_for_nginx_is_the_json_431_and_fewer_reach_the_app(stack):
    many = "".join(f"X-H{n}: {n}\r\n" for n in range(3000))
    head = f"GET /api/v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\n{many}\r\n"
    assert answer(stack.raw(head.encode()))[0] == 431
    # 300 headers pass nginx and gunicorn (over its default of 100): the app's own 401.
    some = "".join(f"X-H{n}: {n}\r\n" for n in range(300))
    head = f"GET /api/v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\n{some}Connection: close\r\n\r\n"
    status, content_type, body = answer(stack.raw(head.encode()))
    assert status == 401
    assert is_envelope(status, content_type, body)


def test_a_body_over_the_apps_largest_is_the_json_413_from_nginx(stack):
    body = b"x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)
    head = (
        "POST /api/v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", stack.port), timeout=PROMPT) as conn:
        conn.sendall(head)  # nginx answers from the Content-Length, the body unsent
        response = http.client.HTTPResponse(conn)
        response.begin()
        answer = json.loads(response.read())
    assert response.status == 413
    assert response.getheader("Connection") == "close"
    assert is_envelope(413, response.getheader("Content-Type"), answer)


def test_a_malformed_request_is_the_json_400(stack):
    status, content_type, body = answer(stack.raw(b"GET /api/v1/agents HTTP/1.1\r\n\r\n"))
    assert status == 400  # HTTP/1.1 without Host
    assert is_envelope(status, content_type, body)


def test_a_bad_host_is_a_json_400_without_a_traceback_in_the_log(stack):
    head = b"GET /api/v1/agents HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n"
    status, content_type, body = answer(stack.raw(head))
    assert status == 400
    assert is_envelope(status, content_type, body)
    time.sleep(0.5)  # the worker's log line reaches the file
    log = stack.gunicorn_log.read_text()
    assert "evil.example" in log  # said once, on a line
    assert "Traceback" not in log


def test_an_mcp_session_goes_through_to_the_uvicorn_process(stack):
    def call(method: str, path: str, permission: str, **body) -> dict:
        headers = {"Authorization": f"Bearer {stack.keys[permission]}"}
        response = requests.request(
            method, stack.url + path, headers=headers, json=body, timeout=PROMPT
        )
        assert response.status_code == 201, response.text
        return response.json()

    agent = call("POST", "/api/v1/agents", "write", name="Through nginx")
    thread = call("POST", "/api/v1/threads", "run", agent_id=agent["id"])
    run = call("POST", f"/api/v1/threads/{thread['id']}/runs", "run", input="hi")

    async def session():
        async with http_client(stack.url + "/mcp", headers_for(run_token=run["token"])) as client:
            return await client.read_resource("memoryhub://run/context")

    read = run_async(session)
    assert [c.text for c in read.contents] == [run["context"]]
