"""``make run``'s start-up path without DATABASE_URL: embedded PostgreSQL, migrate, serve."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

import pytest
from django.conf import settings

from memoryhub.embedded import free_port

pytestmark = pytest.mark.slow


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


def test_devrun_starts_embedded_postgres_migrates_and_serves(tmp_path):
    port = free_port()
    environ = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "REDIS_URL", "MEMORYHUB_ENV", "DJANGO_SETTINGS_MODULE")
    }
    environ.update(MEMORYHUB_DATA_DIR=str(tmp_path), PORT=str(port))
    process = subprocess.Popen(
        [sys.executable, "-m", "memoryhub.devrun"],
        env=environ,
        cwd=settings.BASE_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        status, health = None, None
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and process.poll() is None:
            try:
                status, health = _get(f"http://127.0.0.1:{port}/healthz")
                break
            except OSError:
                time.sleep(0.5)
        assert status == 200, process.stdout.read() if process.poll() is not None else status
        assert health["checks"] == {"database": "ok", "broker": "ok", "memory_providers": "ok"}
        demo = json.loads((tmp_path / "demo-credentials.json").read_text())
        status, agent = _get(
            f"http://127.0.0.1:{port}/api/v1/agents",
            headers={
                "Authorization": f"Bearer {demo['api_key']}",
                "Content-Type": "application/json",
            },
            data=b'{"name": "Demo agent"}',
        )
        assert status == 201 and agent["id"].startswith("agt_")
        tools = _mcp_tools(f"http://127.0.0.1:{port}/mcp", demo["api_key"], agent["id"])
        assert "search_memory" in tools  # the MCP server answers on the same address
        assert (tmp_path / "pg" / "PG_VERSION").read_text().strip() == "16"
    finally:
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=60)
    assert process.returncode == 0, output
    assert demo["api_key"] in output  # the demo key is printed for the newcomer
    assert "embedded PostgreSQL 16" in output
