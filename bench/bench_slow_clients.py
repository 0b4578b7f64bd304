"""Slow clients: the latency of normal requests while clients trickle request bodies.

gunicorn (2 sync workers, ``memoryhub.gunicorn_conf``) alone and behind Debian's nginx with
``deploy/nginx.conf``, and one uvicorn serving ``hub.asgi`` alone. Normal requests
are ``/healthz`` and an authenticated ``GET /api/v1/agents``, one after the other; the slow
clients each send their headers, then one byte of body every 0.2 s for as long as the
measure lasts. Figures: p50/p95/p99 of the normal requests with no slow client and with
:data:`SLOW` of them, and how many of them timed out (:data:`TIMEOUT`; a measure stops at
:data:`GIVE_UP` of them).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from bench.common import own_database, percentiles, server
from memoryhub.embedded import free_port

# 4 already stop gunicorn's 2 workers; uvicorn waits for a body without blocking.
SLOW = {"alone": 4, "behind nginx": 50, "uvicorn": 50}
REQUESTS = 60
TIMEOUT = 2.0  # seconds a normal request may take before it counts as timed out
TRICKLE = 0.2  # seconds between two bytes of a slow body
GIVE_UP = 5  # timed-out requests after which a measure stops (the server is stuck)


@contextmanager
def _nginx(web: str) -> Iterator[str]:
    from support.servers import nginx_prefix, start_nginx

    prefix, port = nginx_prefix(), free_port()
    web_port = int(web.rsplit(":", 1)[1])
    process = start_nginx(prefix, port, web_port, free_port())
    try:
        _wait(port)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=20)
        shutil.rmtree(prefix, ignore_errors=True)


def _wait(port: int) -> None:
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("nginx did not start")


@contextmanager
def _uvicorn(database_url: str) -> Iterator[str]:
    """One uvicorn serving everything (``hub.asgi``), as the README also allows."""
    port = free_port()
    environ = {**os.environ, "DATABASE_URL": database_url, "MEMORYHUB_ENV": "development"}
    command = [sys.executable, "-m", "uvicorn", "hub.asgi:application"]
    process = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        [*command, "--port", str(port), "--log-level", "warning"], env={**environ, "DEBUG": "0"}
    )
    try:
        _wait(port)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=20)


@contextmanager
def _slow_clients(base: str, key: str, count: int) -> Iterator[None]:
    """``count`` clients sending a body a byte at a time until the block ends."""
    port = int(base.rsplit(":", 1)[1])
    body = b'{"name": "' + b"s" * 400 + b'"}'
    head = (
        "POST /api/v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {key}\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    done = threading.Event()

    def trickle() -> None:
        conns = []
        for _ in range(count):
            conn = socket.create_connection(("127.0.0.1", port), timeout=60)
            conn.sendall(head)
            conns.append(conn)
        for offset in range(len(body)):
            if done.wait(TRICKLE):
                break
            for conn in conns:
                with contextlib.suppress(OSError):  # a server that gave up on this one
                    conn.sendall(body[offset : offset + 1])
        for conn in conns:
            conn.close()

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    time.sleep(1)  # every slow client has sent its headers
    try:
        yield
    finally:
        done.set()
        thread.join()


def _measure(base: str, key: str) -> dict:
    import requests

    samples, timed_out = [], 0
    paths = [("/healthz", {}), ("/api/v1/agents", {"Authorization": f"Bearer {key}"})]
    for number in range(REQUESTS):
        path, headers = paths[number % 2]
        started = time.perf_counter()
        try:
            requests.get(base + path, headers=headers, timeout=TIMEOUT).raise_for_status()
            samples.append(time.perf_counter() - started)
        except requests.RequestException:
            timed_out += 1
            if timed_out == GIVE_UP:
                break
    figures = percentiles(samples) if samples else {"n": 0}
    return {**figures, "timed_out": timed_out}


def run(results: dict) -> None:
    from memoryhub.services.workspaces import create_api_key, create_workspace
    from support.servers import NGINX

    if not shutil.which(NGINX):
        results["slow_clients"] = {"skipped": "Debian's nginx is not installed (make nginx)"}
        return
    figures: dict = {"slow_clients": SLOW, "requests": REQUESTS, "timeout_s": TIMEOUT}
    with own_database("bench_slow_clients") as url:
        workspace = create_workspace("Slow clients")
        key, writer = (create_api_key(workspace, p)[1] for p in ("read", "write"))
        extra = ["-c", "python:memoryhub.gunicorn_conf"]
        with ExitStack() as stack:
            web = stack.enter_context(server(url, extra=extra))
            proxied = stack.enter_context(_nginx(web))
            asgi = stack.enter_context(_uvicorn(url))
            for setup, base in (("alone", web), ("behind nginx", proxied), ("uvicorn", asgi)):
                quiet = _measure(base, key)
                with _slow_clients(base, writer, SLOW[setup]):
                    busy = _measure(base, key)
                figures[setup] = {"quiet": quiet, "with_slow_clients": busy}
                print(setup, figures[setup], flush=True)
    results["slow_clients"] = figures
