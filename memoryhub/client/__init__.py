"""memoryhub's Python client for agent code. It needs only ``requests``::

    from memoryhub.client import MemoryHub

    inv = MemoryHub(url, api_key).accept_run(thread_id, input={"message": "hi"})
    mem = inv.memory.at("users/{user}/" if inv.user else "notes/")
    mem.remember("Prefers metric units", tags=["pref"], key="units")
    tools = inv.tools + inv.memory.tools(paths=["users/{user}/"])  # one loop, every tool
    inv.end()

docs/client.md shows the whole of it.
"""

from memoryhub.client.errors import (
    Conflict,
    Forbidden,
    InvalidRequest,
    InvocationEnded,
    MemoryHubError,
    NotFound,
    PreconditionFailed,
    Unauthenticated,
    Unavailable,
)
from memoryhub.client.facts import Fact, FactPage, Folder, Memory
from memoryhub.client.hub import Invocation, MemoryHub
from memoryhub.client.tools import Tools

__all__ = [
    "Conflict",
    "Fact",
    "FactPage",
    "Folder",
    "Forbidden",
    "InvalidRequest",
    "Invocation",
    "InvocationEnded",
    "Memory",
    "MemoryHub",
    "MemoryHubError",
    "NotFound",
    "PreconditionFailed",
    "Tools",
    "Unauthenticated",
    "Unavailable",
]
