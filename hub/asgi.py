"""The ASGI entry: ``/mcp`` to the MCP server (Streamable HTTP), everything else to Django.

``make run`` serves it with uvicorn; the REST API and the panel behave as under WSGI
(``memoryhub.wsgi`` still serves them alone where no MCP is wanted).
"""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
django_application = get_asgi_application()

from hub.mcp.http import PATH, mcp_app  # noqa: E402 - needs Django set up
from memoryhub.bodyguard import early_refusal, refuse  # noqa: E402 - needs Django set up

mcp_application = mcp_app()


async def application(scope, receive, send) -> None:
    # Lifespan goes to the MCP app: its session manager starts and stops with the server
    # (Django's handler takes no lifespan events).
    path = scope.get("path", "")
    if scope["type"] == "lifespan" or path == PATH or path.startswith(PATH + "/"):
        await mcp_application(scope, receive, send)
    elif (refusal := early_refusal(scope)) is not None:
        await refuse(send, refusal)
    else:
        await django_application(scope, receive, send)
