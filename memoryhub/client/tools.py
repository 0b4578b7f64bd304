"""Tools for the model: OpenAI function definitions and one ``call`` that executes any of them.

A run's mounted memories (file and record tools) and its facts (search_memory, save_memory,
forget_memory) are executed by two endpoints; ``inv.tools + inv.memory.tools(paths=[...])``
gives one list of definitions and one ``call`` that sends each call to the right one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memoryhub.client.errors import InvocationEnded, MemoryHubError
from memoryhub.client.http import Http

ToolMessage = dict[str, Any]  # {"role": "tool", "tool_call_id": ..., "content": ...}


@dataclass(frozen=True)
class _Source:
    """Definitions and the endpoint that executes them."""

    definitions: list[dict[str, Any]]
    send: Callable[[dict[str, Any]], ToolMessage]

    @property
    def names(self) -> set[str]:
        return {d["function"]["name"] for d in self.definitions}


def _plain(tool_call: Any) -> dict[str, Any]:
    """An OpenAI tool call as a dict (the openai package answers pydantic objects)."""
    return tool_call.model_dump() if hasattr(tool_call, "model_dump") else dict(tool_call)


def tool_name(tool_call: dict[str, Any]) -> str | None:
    function = tool_call.get("function")
    return function.get("name") if isinstance(function, dict) else tool_call.get("name")


class Tools:
    """``definitions`` to give the model; ``call(tool_call)`` answers the tool message."""

    def __init__(self, sources: list[_Source]) -> None:
        names = [n for s in sources for n in s.names]
        if len(names) != len(set(names)):
            raise ValueError(f"tool names offered twice: {sorted(names)}")
        self._sources = sources

    @property
    def definitions(self) -> list[dict[str, Any]]:
        return [d for s in self._sources for d in s.definitions]

    def __add__(self, other: Tools) -> Tools:
        return Tools(self._sources + other._sources)

    def call(self, tool_call: Any) -> ToolMessage:
        """Execute one tool call of the model (``{id, type, function: {name, arguments}}``).

        A refusal comes back as the message's ``error: <code>: <message>`` text for the
        model; only :class:`InvocationEnded` raises (the run has ended)."""
        call = _plain(tool_call)
        try:
            return self._source_for(tool_name(call)).send(call)
        except InvocationEnded:
            raise
        except MemoryHubError as refusal:
            return {
                "role": "tool",
                "tool_call_id": call.get("id"),
                "content": refusal.as_tool_text(),
            }

    def _source_for(self, name: str | None) -> _Source:
        for source in self._sources:
            if name in source.names:
                return source
        raise MemoryHubError(
            None, {"code": "not_found", "message": f"no tool named {name!r} is offered"}
        )


def mount_tools(http: Http, run_id: str, definitions: list[dict[str, Any]]) -> Tools:
    """The run's mounted memories' tools, executed by ``/api/v1/runs/{id}/tool-calls``."""

    def send(call: dict[str, Any]) -> ToolMessage:
        # The server executes a call id at most once, so a call with an id may be repeated.
        path = f"/api/v1/runs/{run_id}/tool-calls"
        return http.request("POST", path, json=call, safe=bool(call.get("id")))

    return Tools([_Source(definitions, send)])


def fact_tools(http: Http, paths: list[str] | None) -> Tools:
    """The facts tools for ``paths`` (the whole memory when None), via ``/v0/memory/tools``."""
    params = [("paths", p) for p in paths or []]
    definitions = http.request("GET", "/v0/memory/tools", params=params, safe=True)["definitions"]

    def send(call: dict[str, Any]) -> ToolMessage:
        body = {"tool_call": call} if paths is None else {"paths": paths, "tool_call": call}
        return http.request("POST", "/v0/memory/tools/call", json=body, safe=bool(call.get("id")))

    return Tools([_Source(definitions, send)])
