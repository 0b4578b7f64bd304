"""A small Python client for memoryhub's REST API, for agent runtimes.

It imports ``requests`` and nothing of Django, so a runtime can use it on its own::

    from memoryhub.client import MemoryHub

    hub = MemoryHub("http://127.0.0.1:8000", api_key)
    agent = hub.create_agent("Support bot")
    thread = hub.create_thread(agent["id"], end_user="alice")
    run = hub.accept_run(thread["id"], input="Which units do I prefer?")
    prompt = run.context + "\\n\\n" + question       # memory the model should read
    tools = run.tools                                 # OpenAI function definitions
    message = run.call_tool(tool_call)                # {"role": "tool", ...}
    run.memory.remember("users/{user}/", "Prefers metric units", key="units")
    run.end()
"""

from memoryhub.client.errors import (
    Conflict,
    Forbidden,
    InvalidRequest,
    MemoryHubError,
    NotFound,
    PreconditionFailed,
    Unauthenticated,
    Unavailable,
)
from memoryhub.client.hub import Facts, MemoryHub, RunSession

__all__ = [
    "Conflict",
    "Facts",
    "Forbidden",
    "InvalidRequest",
    "MemoryHub",
    "MemoryHubError",
    "NotFound",
    "PreconditionFailed",
    "RunSession",
    "Unauthenticated",
    "Unavailable",
]
