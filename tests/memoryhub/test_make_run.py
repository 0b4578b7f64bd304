"""``make run``'s start-up path without DATABASE_URL: embedded PostgreSQL, migrate, serve;
and its stop: everything it started is gone within 5 s of Ctrl-C or SIGTERM, whatever it
was doing, also when started as a shell's background job (which ignores SIGINT)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import psutil
import pytest
from django.conf import settings

from memoryhub.embedded import free_port

pytestmark = pytest.mark.slow

STOP_WITHIN = 5  # seconds


def _get(url: str, headers: dict | None = None, data: bytes | None = None):
    request = urllib.request.Request(url, headers=headers or {}, data=data)  # noqa: S310
    with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310
        return response.status, json.loads(response.read())


def _mcp_tools(url: str, api_key: str, agent_id: str) -> list[str]:
    """The tool names an MCP client configured with the demo key and agent is offered."""
    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {api_key}", "x-memoryhub-agent": agent_id}

    async def names() -> list[str]:
        with anyio.fail_after(60):
            async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
                transport = streamable_http_client(url, http_client=http)
                async with Client(transport, read_timeout_seconds=30) as client:
                    return [tool.name for tool in (await client.list_tools()).tools]

    return anyio.run(names)


def _as_a_background_job() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # what a shell does to a job started with &


class DevRun:
    """``python -m memoryhub.devrun`` on its own data folder and port, started as a
    background job, its output read as it comes."""

    def __init__(self, data: Path) -> None:
        self.data, self.port = data, free_port()
        environ = {
            k: v
            for k, v in os.environ.items()
            if k not in ("DATABASE_URL", "REDIS_URL", "MEMORYHUB_ENV", "DJANGO_SETTINGS_MODULE")
        }
        environ.update(MEMORYHUB_DATA_DIR=str(data), PORT=str(self.port))
        self.process = subprocess.Popen(  # noqa: S603 - our own interpreter and module
            [sys.executable, "-m", "memoryhub.devrun"],
            env=environ,
            cwd=settings.BASE_DIR,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            preexec_fn=_as_a_background_job,  # before any thread of this test starts
        )
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line)

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def wait_for(self, condition, seconds: float = 180) -> None:
        deadline = time.monotonic() + seconds
        while not condition():
            assert self.process.poll() is None, self.output
            assert time.monotonic() < deadline, self.output
            time.sleep(0.05)

    def printed(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    def started(self) -> list[psutil.Process]:
        """Everything it runs now: its descendants, and what works on its PostgreSQL's
        data folder (pg_ctl leaves the postmaster to run on its own)."""
        try:
            found = [psutil.Process(self.process.pid)]
            found += found[0].children(recursive=True)
        except psutil.NoSuchProcess:
            return []
        for process in psutil.process_iter(["cmdline"]):
            if any(str(self.data / "pg") in part for part in process.info["cmdline"] or ()):
                found += [process, *_children(process)]
        return found

    def stop(self, signum: int) -> tuple[list[str], float]:
        """Sends ``signum``; what is still running after STOP_WITHIN seconds, and how
        long the rest took to end."""
        running = self.started()
        sent = time.monotonic()
        self.process.send_signal(signum)
        left = _running_after(running, STOP_WITHIN)
        took = time.monotonic() - sent
        for process in left:  # so that a failing test leaves nothing behind either
            process.kill()
        self.process.wait(timeout=30)
        self.reader.join(timeout=5)
        return [" ".join(p.info.get("cmdline") or [p.name()]) for p in left], took


def _children(process: psutil.Process) -> list[psutil.Process]:
    try:
        return process.children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _running_after(processes: list[psutil.Process], seconds: float) -> list[psutil.Process]:
    def running(process: psutil.Process) -> bool:
        try:
            return process.status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    deadline = time.monotonic() + seconds
    while (left := [p for p in processes if running(p)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    for process in left:
        process.info = {"cmdline": _cmdline(process)}
    return left


def _cmdline(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:
        return []


def test_devrun_starts_embedded_postgres_migrates_and_serves(tmp_path):
    run = DevRun(tmp_path)
    base = f"http://127.0.0.1:{run.port}"
    try:
        run.wait_for(lambda: run.printed("memoryhub serving on"))
        status, health = _get(f"{base}/healthz")
        assert status == 200
        assert health["checks"] == {"database": "ok", "broker": "ok", "memory_providers": "ok"}
        demo = json.loads((tmp_path / "demo-credentials.json").read_text())
        status, agent = _get(
            f"{base}/api/v1/agents",
            headers={
                "Authorization": f"Bearer {demo['api_key']}",
                "Content-Type": "application/json",
            },
            data=b'{"name": "Demo agent"}',
        )
        assert status == 201 and agent["id"].startswith("agt_")
        tools = _mcp_tools(f"{base}/mcp", demo["api_key"], agent["id"])
        assert "search_memory" in tools  # the MCP server answers on the same address
        assert (tmp_path / "pg" / "PG_VERSION").read_text().strip() == "16"
        assert demo["api_key"] in run.output  # the demo key is printed for the newcomer
        assert "embedded PostgreSQL 16" in run.output
    finally:
        # Ctrl-C, though the job came in with SIGINT ignored.
        left, took = run.stop(signal.SIGINT)
    assert left == [], f"still running {took:.1f} s after Ctrl-C: {left}\n{run.output}"
    assert run.process.returncode == 0, run.output


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_while_the_demo_is_seeded_stops_everything(tmp_path, signum):
    run = DevRun(tmp_path)
    run.wait_for(lambda: run.printed("seeding the demo"))
    left, took = run.stop(signum)
    assert left == [], f"still running {took:.1f} s after the signal: {left}\n{run.output}"
    assert run.process.returncode == 0, run.output
    credentials = json.loads((tmp_path / "demo-credentials.json").read_text())
    assert not credentials.get("seeded")  # the next run seeds it again


def test_a_stop_while_postgres_is_made_leaves_no_half_made_database(tmp_path):
    run = DevRun(tmp_path)
    run.wait_for(lambda: (tmp_path / "pg" / "global").exists())  # initdb is writing
    left, took = run.stop(signal.SIGTERM)
    assert left == [], f"still running {took:.1f} s after SIGTERM: {left}\n{run.output}"
    assert run.process.returncode == 0, run.output
    # Nothing is left that a next start could not use: it makes the folder afresh.
    assert not (tmp_path / "pg" / "PG_VERSION").exists()
