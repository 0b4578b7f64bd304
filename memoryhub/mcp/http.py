"""Streamable HTTP at ``/mcp``: the SDK's Starlette app, mounted by ``memoryhub.asgi``.

MCP sessions live in the serving process's memory (the SDK's session manager), so every
request of one session must reach the same process: ``make run`` serves with one uvicorn
process, and several processes need the proxy to keep a session (``Mcp-Session-Id``) on one.
"""

from __future__ import annotations

import os

from django.conf import settings
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette

from memoryhub.mcp.server import build_server, http_session, keep_api_key_sessions

PATH = "/mcp"
# An MCP session without a request this long ends, and with it the run an API key opened.
IDLE_SECONDS = float(os.environ.get("MEMORYHUB_MCP_IDLE_SECONDS", "1800"))


def _security() -> TransportSecuritySettings:
    """The SDK's Host and Origin checks (against DNS rebinding), with Django's hosts."""
    hosts = list(settings.ALLOWED_HOSTS)
    if any(h == "*" or h.startswith(".") for h in hosts):  # patterns the SDK can't match
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[host + port for host in hosts for port in ("", ":*")],
        allowed_origins=[f"{scheme}://{host}" for scheme in ("http", "https") for host in hosts]
        + [f"{scheme}://{host}:*" for scheme in ("http", "https") for host in hosts],
    )


def mcp_app() -> Starlette:
    server = build_server(http_session)
    keep_api_key_sessions(server)
    return server.streamable_http_app(
        streamable_http_path=PATH,
        session_idle_timeout=IDLE_SECONDS,
        transport_security=_security(),
    )
