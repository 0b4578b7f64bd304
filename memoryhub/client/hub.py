"""The client: a workspace (API key), a run (run token), and a run's facts memory."""

from __future__ import annotations

from typing import Any

import requests

from memoryhub.client.errors import MemoryHubError, error_for

RUN_TOKEN_HEADER = "x-agentos-run-token"  # noqa: S105 - a header name, not a secret


class _Http:
    """JSON over one requests session, refusals raised as :class:`MemoryHubError`."""

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str],
        timeout: float,
        session: requests.Session | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.session = session or requests.Session()
        self.headers = headers
        self.timeout = timeout

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        response = self.session.request(
            method,
            self.base_url + path,
            json=json,
            params=params,
            timeout=self.timeout,
            headers={**self.headers, **(headers or {})},
        )
        if response.status_code >= 400:
            try:
                error = response.json()["error"]
            except (ValueError, KeyError, TypeError):
                error = {"code": "error", "message": response.text[:500]}
            raise error_for(response.status_code, error)
        if response.status_code == 204 or not response.content:
            return None
        return response.json()


def _without_none(**fields: Any) -> dict:
    return {k: v for k, v in fields.items() if v is not None}


class MemoryHub:
    """A workspace, through an API key (``Authorization: Bearer``)."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 30.0,
        session: requests.Session | None = None,
    ) -> None:
        self._http = _Http(base_url, {"Authorization": f"Bearer {api_key}"}, timeout, session)

    def create_agent(
        self, name: str, *, memory_mounts: list | None = None, toolset: dict | None = None
    ) -> dict:
        body = _without_none(name=name, memory_mounts=memory_mounts, toolset=toolset)
        return self._http.request("POST", "/api/v1/agents", json=body)

    def create_memory(self, name: str, **fields: Any) -> dict:
        return self._http.request("POST", "/api/v1/memories", json={"name": name, **fields})

    def create_thread(
        self, agent_id: str, *, end_user: str | None = None, memories: list | None = None
    ) -> dict:
        body = _without_none(agent_id=agent_id, end_user=end_user, memories=memories)
        return self._http.request("POST", "/api/v1/threads", json=body)

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
        body = {"name": name, "memory_id": memory_id, "access": access, "recall": recall}
        return self._http.request(
            "POST", f"/api/v1/threads/{thread_id}/memories", json=body, headers={"If-Match": etag}
        )

    def accept_run(
        self,
        thread_id: str,
        *,
        input: Any = None,
        parent_run_id: str | None = None,
        eval: bool = False,
        history_compacted: bool = False,
        inline: bool = False,
    ) -> RunSession:
        body = _without_none(input=input, parent_run_id=parent_run_id)
        body.update(eval=eval, history_compacted=history_compacted, inline=inline)
        answer = self._http.request("POST", f"/api/v1/threads/{thread_id}/runs", json=body)
        return RunSession(
            self._http.base_url, answer, timeout=self._http.timeout, session=self._http.session
        )

    def put_file(self, memory_id: str, path: str, content: str, *, etag: str | None = None) -> dict:
        headers = {"If-Match": etag} if etag else {}
        return self._http.request(
            "PUT",
            f"/api/v1/memories/{memory_id}/files/{path}",
            json={"content": content},
            headers=headers,
        )

    def get_file(self, memory_id: str, path: str) -> dict:
        return self._http.request("GET", f"/api/v1/memories/{memory_id}/files/{path}")

    def erase_end_user(self, end_user: str) -> None:
        self._http.request("DELETE", f"/api/v1/end-users/{end_user}")


class RunSession:
    """One accepted run: its memory context, its tools, its facts; ``end()`` when done."""

    def __init__(
        self,
        base_url: str,
        answer: dict,
        *,
        timeout: float = 30.0,
        session: requests.Session | None = None,
    ) -> None:
        self.id: str = answer["id"]
        self.answer = answer
        self.context: str = answer.get("context", "")
        self.tools: list[dict] = answer.get("tools", [])
        self.mounts: list[dict] = answer.get("mounts", [])
        self._http = _Http(base_url, {RUN_TOKEN_HEADER: answer["token"]}, timeout, session)
        self.memory = Facts(self._http)

    def call_tool(self, tool_call: dict) -> dict:
        """Execute one of the model's tool calls (OpenAI shape); answers the tool message."""
        return self._http.request("POST", f"/api/v1/runs/{self.id}/tool-calls", json=tool_call)

    def end(self) -> dict:
        return self._http.request("POST", f"/api/v1/runs/{self.id}/end")


class Facts:
    """The run's facts memory (``/v0/memory``): remember, search, list, get, forget."""

    def __init__(self, http: _Http) -> None:
        self._http = http

    def remember(
        self,
        path: str,
        text: str,
        *,
        tags: list[str] | None = None,
        confidence: float | None = None,
        replaces: str | None = None,
        key: str | None = None,
    ) -> dict:
        body = _without_none(
            path=path, text=text, tags=tags, confidence=confidence, replaces=replaces, key=key
        )
        return self._http.request("POST", "/v0/memory/facts", json=body)

    def search(
        self,
        query: str,
        *,
        path: str | None = None,
        tags: list[str] | None = None,
        k: int | None = None,
    ) -> list[dict]:
        body = _without_none(query=query, path=path, tags=tags, k=k)
        return self._http.request("POST", "/v0/memory/search", json=body)["facts"]

    def list(
        self,
        *,
        path: str | None = None,
        tags: list[str] | None = None,
        limit: int | None = None,
        before: str | None = None,
    ) -> dict:
        params = _without_none(
            path=path, tags=",".join(tags) if tags else None, limit=limit, before=before
        )
        return self._http.request("GET", "/v0/memory/facts", params=params)

    def get(self, fact_id: str) -> dict:
        return self._http.request("GET", f"/v0/memory/facts/{fact_id}")

    def versions(self, fact_id: str) -> list[dict]:
        return self._http.request("GET", f"/v0/memory/facts/{fact_id}/versions")["versions"]

    def forget(self, fact_id: str) -> None:
        self._http.request("DELETE", f"/v0/memory/facts/{fact_id}")

    def context(self, query: str, *, paths: list[str] | None = None, k: int | None = None) -> str:
        body = _without_none(query=query, paths=paths, k=k)
        return self._http.request("POST", "/v0/memory/context", json=body)["context"]

    def tool_definitions(self, paths: list[str]) -> list[dict]:
        return self._http.request("GET", "/v0/memory/tools", params=[("paths", p) for p in paths])[
            "definitions"
        ]

    def call_tool(self, tool_call: dict, *, paths: list[str]) -> dict:
        body = {"paths": paths, "tool_call": tool_call}
        return self._http.request("POST", "/v0/memory/tools/call", json=body)


__all__ = ["Facts", "MemoryHub", "MemoryHubError", "RunSession"]
