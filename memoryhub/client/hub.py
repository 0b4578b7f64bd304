"""The client: a workspace through an API key, and an invocation (a run) through its token."""

from __future__ import annotations

from typing import Any

from memoryhub.client.facts import Memory
from memoryhub.client.http import Http, Timeout
from memoryhub.client.tools import Tools, mount_tools

RUN_TOKEN_HEADER = "x-agentos-run-token"  # noqa: S105 - a header name, not a secret


def _without_none(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


class MemoryHub:
    """A workspace, through an API key (``Authorization: Bearer``).

    ``timeout`` is seconds (or ``(connect, read)``); ``retries`` and ``backoff`` apply to the
    calls that are safe to repeat (see :mod:`memoryhub.client.http`)."""

    def __init__(
        self,
        url: str,
        api_key: str,
        *,
        timeout: Timeout = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"}
        self._http = Http(url, headers, timeout=timeout, retries=retries, backoff=backoff)

    def accept_run(
        self,
        thread_id: str,
        *,
        input: Any = None,
        parent_run_id: str | None = None,
        eval: bool = False,
        history_compacted: bool = False,
        inline: bool = False,
    ) -> Invocation:
        """Start a run on a thread: its memory context, tools and token (not retried)."""
        body = _without_none(input=input, parent_run_id=parent_run_id)
        body.update(eval=eval, history_compacted=history_compacted, inline=inline)
        path = f"/api/v1/threads/{thread_id}/runs"
        answer = self._http.request("POST", path, json=body, safe=False)
        run = {**answer, "input": input}  # the acceptance does not repeat the input
        return Invocation(self._http.base_url, run, answer["token"], **self._http.options)

    def close(self) -> None:
        """Close the pooled connections (the object can still be used afterwards)."""
        self._http.close()

    def create_agent(
        self, name: str, *, memory_mounts: list | None = None, toolset: dict | None = None
    ) -> dict:
        body = _without_none(name=name, memory_mounts=memory_mounts, toolset=toolset)
        return self._http.request("POST", "/api/v1/agents", json=body, safe=False)

    def create_memory(self, name: str, **fields: Any) -> dict:
        body = {"name": name, **fields}
        return self._http.request("POST", "/api/v1/memories", json=body, safe=False)

    def create_thread(
        self, agent_id: str, *, end_user: str | None = None, memories: list | None = None
    ) -> dict:
        body = _without_none(agent_id=agent_id, end_user=end_user, memories=memories)
        return self._http.request("POST", "/api/v1/threads", json=body, safe=False)

    def mount(
        self,
        thread_id: str,
        name: str,
        memory_id: str,
        *,
        etag: str,
        access: str = "read",
        recall: bool = True,
    ) -> dict:
        """Mount a memory on a thread (``etag``: the thread's current one)."""
        body = {"name": name, "memory_id": memory_id, "access": access, "recall": recall}
        path = f"/api/v1/threads/{thread_id}/memories"
        return self._http.request("POST", path, json=body, headers={"If-Match": etag}, safe=False)

    def put_file(self, memory_id: str, path: str, content: str, *, etag: str | None = None) -> dict:
        headers = {"If-Match": etag} if etag else {}
        url = f"/api/v1/memories/{memory_id}/files/{path}"
        return self._http.request(
            "PUT", url, json={"content": content}, headers=headers, safe=False
        )

    def get_file(self, memory_id: str, path: str) -> dict:
        return self._http.request("GET", f"/api/v1/memories/{memory_id}/files/{path}", safe=True)

    def erase_end_user(self, end_user: str) -> dict:
        """Erase a person; answers the erase receipt (counts per kind, ``verified``)."""
        return self._http.request("DELETE", f"/api/v1/end-users/{end_user}", safe=False)


class Invocation:
    """One run of an agent (the document's ``inv``): ``memory``, ``user``, ``input``,
    ``context`` (memory text for the prompt), ``tools`` (the mounted memories' tools) and
    ``end()``. Every call uses the run token."""

    def __init__(self, url: str, run: dict[str, Any], token: str, **options: Any) -> None:
        self.id: str = run["id"]
        self.thread_id: str = run["thread_id"]
        self.agent_id: str = run["agent_id"]
        self.user: str | None = run.get("end_user")
        self.input: Any = run.get("input")
        self.context: str = run.get("context", "")
        self.mounts: list[dict[str, Any]] = run.get("mounts", [])
        self.token = token  # to hand the run on to another process (Invocation.from_token)
        self._http = Http(url, {RUN_TOKEN_HEADER: token}, **options)
        self.memory = Memory(self._http)
        self.tools: Tools = mount_tools(self._http, self.id, run.get("tools", []))

    @classmethod
    def from_token(cls, url: str, token: str, **options: Any) -> Invocation:
        """The same object for a runtime that holds only the run's token (``options``:
        ``timeout``, ``retries``, ``backoff``)."""
        http = Http(url, {RUN_TOKEN_HEADER: token}, **options)
        run = http.request("GET", "/api/v1/runs/current", safe=True)
        http.close()
        return cls(url, run, token, **options)

    def end(self) -> None:
        """End the run: its token can then only read (ending twice is fine)."""
        self._http.request("POST", f"/api/v1/runs/{self.id}/end", safe=True)

    def close(self) -> None:
        """Close the pooled connections (the run goes on; ``end()`` ends it)."""
        self._http.close()
