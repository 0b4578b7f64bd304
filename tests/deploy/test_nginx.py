"""The production setup of the README, live: Debian's nginx with ``deploy/nginx.conf`` in
front of gunicorn (the API) and uvicorn (``/mcp``), on the test database.

Slow clients are nginx's to wait for; what nginx refuses itself answers the app's JSON
envelope; a bad ``Host`` is a 400 without a traceback in the log.
"""

from __future__ import annotations

import http.client
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from django.conf import settings
from django.core.management import call_command

from memoryhub.embedded import free_port
from memoryhub.errors import ApiError
from memoryhub.services.workspaces import create_api_key, create_workspace
from tests.workers import stop, wait_until_up
from tests.workers import tests_database_url as database_url

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

CONF = Path(settings.BASE_DIR) / "deploy" / "nginx.conf"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
SLOW_CLIENTS = 50
PROMPT = 5  # seconds: what "still answers" means while the slow clients trickle
GUNICORN = ["-c", "python:memoryhub.gunicorn_conf", "memoryhub.wsgi"]


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
            return _read_all(conn)


def _read_all(conn: socket.socket) -> bytes:
    data = b""
    while chunk := conn.recv(65536):
        data += chunk
    return data


def _environment() -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    environ.update(
        MEMORYHUB_ENV="test",
        DJANGO_SETTINGS_MODULE="memoryhub.settings",
        DATABASE_URL=database_url(),
        PYTHONPATH=str(settings.BASE_DIR),
    )
    return environ


def _gunicorn(port: int, log: Path) -> subprocess.Popen:
    # The README's production command, with two sync workers as on a small machine.
    command = [sys.executable, "-m", "gunicorn", *GUNICORN, "--workers", "2"]
    return subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        [*command, "--bind", f"127.0.0.1:{port}", "--log-level", "warning"],
        env=_environment(),
        cwd=settings.BASE_DIR,
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
    )


def _uvicorn(port: int) -> subprocess.Popen:
    command = [sys.executable, "-m", "uvicorn", "memoryhub.asgi:application"]
    return subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        [*command, "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
        env=_environment(),
        cwd=settings.BASE_DIR,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _nginx(prefix: Path, port: int, web: int, mcp: int) -> subprocess.Popen:
    """nginx in the foreground with the shipped server block, only its ports changed."""
    server = CONF.read_text()
    for old, new in (
        ("listen 80;", f"listen 127.0.0.1:{port};"),
        ("127.0.0.1:8000", f"127.0.0.1:{web}"),
        ("127.0.0.1:8001", f"127.0.0.1:{mcp}"),
    ):
        assert old in server, old
        server = server.replace(old, new)
    (prefix / "memoryhub.conf").write_text(server)
    temp = "".join(f"{kind}_temp_path {prefix}/{kind};\n" for kind in TEMP_PATHS)
    (prefix / "nginx.conf").write_text(
        f"worker_processes 1;\npid {prefix}/nginx.pid;\nerror_log {prefix}/error.log;\n"
        "events { worker_connections 1024; }\n"
        f"http {{\naccess_log off;\n{temp}include {prefix}/memoryhub.conf;\n}}\n"
    )
    return subprocess.Popen(  # noqa: S603 - Debian's nginx, our configuration
        [NGINX, "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-g", "daemon off;"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


TEMP_PATHS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")


@pytest.fixture(scope="module")
def stack(django_db_setup, django_db_blocker) -> Iterator[Stack]:
    if not os.access(NGINX, os.X_OK):
        pytest.fail("these tests need Debian's nginx: apt-get install nginx")
    with django_db_blocker.unblock():
        workspace = create_workspace("Behind nginx")
        keys = {p: create_api_key(workspace, p)[1] for p in ("read", "write")}
    # Not under pytest's own temporary folder: nginx's workers (another user when started
    # as root) must reach their temporary files.
    prefix = Path(tempfile.mkdtemp(prefix="memoryhub-nginx-"))
    prefix.chmod(0o755)
    web, mcp, port = free_port(), free_port(), free_port()
    servers = [_gunicorn(web, prefix / "gunicorn.log"), _uvicorn(mcp)]
    try:
        servers.append(_nginx(prefix, port, web, mcp))
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
        statuses = [_read_all(conn).split(b" ", 2)[1] for conn, _ in clients]
    finally:
        for conn, _ in clients:
            conn.close()
    assert set(answered) == {(200, 200)}
    assert statuses == [b"201"] * SLOW_CLIENTS  # each slow request done, none killed
    listed = requests.get(stack.url + "/api/v1/agents?limit=100", headers=read, timeout=PROMPT)
    assert sum(a["name"].startswith("slow-") for a in listed.json()["results"]) == SLOW_CLIENTS


class _Received:
    """What a server sent, for http.client to parse (chunked bodies included)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def makefile(self, *args, **kwargs) -> io.BytesIO:
        return io.BytesIO(self.data)


def _answer(raw: bytes) -> tuple[int, str, dict]:
    response = http.client.HTTPResponse(_Received(raw))  # type: ignore[arg-type]
    response.begin()
    return response.status, response.getheader("Content-Type", ""), json.loads(response.read())


def _is_envelope(status: int, content_type: str, body: dict) -> bool:
    """The app's envelope for this status, word for word but the message."""
    message = body.get("error", {}).get("message", "")
    return (
        content_type.startswith("application/json") and body == ApiError(status, message).as_dict()
    )


@pytest.mark.parametrize("path", ["/api/v1/agents", "/v0/memory/search"])
def test_a_request_line_too_long_is_the_json_414(stack, path):
    head = f"GET {path}?q={'a' * 5000} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    status, content_type, body = _answer(stack.raw(head))
    assert status == 414
    assert _is_envelope(status, content_type, body)
    assert body["error"]["code"] == "uri_too_long"


@pytest.mark.parametrize("size", [5000, 12 * 1024])
def test_a_header_too_long_is_the_json_431(stack, size):
    head = f"GET /api/v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: {'a' * size}\r\n\r\n"
    status, content_type, body = _answer(stack.raw(head.encode()))
    assert status == 431
    assert _is_envelope(status, content_type, body)


def test_too_many_headers_for_nginx_is_the_json_431_and_fewer_reach_the_app(stack):
    many = "".join(f"X-H{n}: {n}\r\n" for n in range(3000))
    head = f"GET /api/v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\n{many}\r\n"
    assert _answer(stack.raw(head.encode()))[0] == 431
    # 300 headers pass nginx and gunicorn (over its default of 100): the app's own 401.
    some = "".join(f"X-H{n}: {n}\r\n" for n in range(300))
    head = f"GET /api/v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\n{some}Connection: close\r\n\r\n"
    status, content_type, body = _answer(stack.raw(head.encode()))
    assert status == 401
    assert _is_envelope(status, content_type, body)


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
    assert _is_envelope(413, response.getheader("Content-Type"), answer)


def test_a_malformed_request_is_the_json_400(stack):
    status, content_type, body = _answer(stack.raw(b"GET /api/v1/agents HTTP/1.1\r\n\r\n"))
    assert status == 400  # HTTP/1.1 without Host
    assert _is_envelope(status, content_type, body)


def test_a_bad_host_is_a_json_400_without_a_traceback_in_the_log(stack):
    head = b"GET /api/v1/agents HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n"
    status, content_type, body = _answer(stack.raw(head))
    assert status == 400
    assert _is_envelope(status, content_type, body)
    time.sleep(0.5)  # the worker's log line reaches the file
    log = stack.gunicorn_log.read_text()
    assert "evil.example" in log  # said once, on a line
    assert "Traceback" not in log


def test_mcp_goes_to_the_uvicorn_process(stack):
    answer = requests.get(stack.url + "/mcp", timeout=PROMPT)
    assert answer.json()["jsonrpc"] == "2.0"  # the MCP server's own answer, not Django's 404
