"""The OpenAI Agents SDK adapter with the real ``openai-agents`` package and a scripted
model: no network besides the live memoryhub."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from agents import Agent, Model, ModelResponse, Runner, set_tracing_disabled
from agents.tool_context import ToolContext
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from memoryhub.adapters.openai_agents import memory_tools
from memoryhub.client import InvocationEnded, MemoryHub

pytestmark = pytest.mark.django_db(transaction=True)
PATHS = ["users/{user}/", "notes/"]


def invoke(tool, call_id: str, arguments: dict) -> Any:
    raw = json.dumps(arguments)
    context = ToolContext(None, tool_name=tool.name, tool_call_id=call_id, tool_arguments=raw)
    return asyncio.run(tool.on_invoke_tool(context, raw))


def test_the_tools_are_memoryhubs_own_definitions(start_run, hub):
    memory = hub.create_memory("Team")
    inv = start_run("hi", memories=[{"name": "team", "memory_id": memory["id"], "access": "read"}])
    tools = memory_tools(inv, paths=PATHS)
    expected = inv.tools.definitions + inv.memory.tools(paths=PATHS).definitions
    assert [(t.name, t.description, t.params_json_schema) for t in tools] == [
        (d["function"]["name"], d["function"]["description"], d["function"]["parameters"])
        for d in expected
    ]
    save = next(t for t in tools if t.name == "save_memory")
    assert save.params_json_schema["properties"]["path"]["enum"] == PATHS
    assert [t.name for t in memory_tools(inv, paths=PATHS, mounted=False)] == [
        "search_memory",
        "save_memory",
        "forget_memory",
    ]


def test_each_function_tool_runs_against_memoryhub(start_run):
    inv = start_run("hi")
    by_name = {t.name: t for t in memory_tools(inv, paths=PATHS)}
    saved = json.loads(
        invoke(by_name["save_memory"], "call_1", {"text": "Alice likes tea", "path": "notes/"})
    )
    [fact] = inv.memory.list()
    assert (saved["saved"], fact.written_by, fact.path) == (fact.id, "model", "notes/")
    found = json.loads(invoke(by_name["search_memory"], "call_2", {"query": "TEA"}))
    assert [f["id"] for f in found["facts"]] == [fact.id]
    assert json.loads(invoke(by_name["forget_memory"], "call_3", {"id": fact.id})) == {
        "forgotten": fact.id
    }
    refused = invoke(by_name["forget_memory"], "call_4", {"id": fact.id})
    assert refused.startswith("error: not_found: ")
    inv.end()
    with pytest.raises(InvocationEnded):
        invoke(by_name["save_memory"], "call_5", {"text": "late", "path": "notes/"})


def test_a_tool_call_leaves_the_event_loop_free(proxy, api_key):
    hub = MemoryHub(proxy.url, api_key, backoff=0)
    inv = hub.accept_run(hub.create_thread(hub.create_agent("Bot")["id"])["id"], input="hi")
    [search, *_] = memory_tools(inv, paths=["notes/"])

    async def call_while_ticking() -> int:
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticker = asyncio.create_task(tick())
        raw = '{"query": "tea"}'
        context = ToolContext(
            None, tool_name="search_memory", tool_call_id="c1", tool_arguments=raw
        )
        proxy.failures = ["slow"]
        await search.on_invoke_tool(context, raw)
        ticker.cancel()
        return ticks

    assert asyncio.run(call_while_ticking()) >= 20  # the loop ran during the half-second call
    inv.close()
    hub.close()


class ScriptedModel(Model):
    """Saves what the user said, searches for it, and answers with what it found."""

    def __init__(self) -> None:
        self.turn = 0
        self.tool_names: list[str] = []

    async def get_response(self, system_instructions, input, model_settings, tools, *a, **kw):
        self.turn += 1
        self.tool_names = [t.name for t in tools]
        if self.turn == 1:
            return _answer(_call("call_1", "save_memory", {"text": "Alice prefers tea"}))
        if self.turn == 2:
            return _answer(_call("call_2", "search_memory", {"query": "tea"}))
        outputs = [
            i for i in input if isinstance(i, dict) and i.get("type") == "function_call_output"
        ]
        found = json.loads(outputs[-1]["output"])["facts"][0]["text"]
        return _answer(_message(f"I remember: {found}"))

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


def _call(call_id: str, name: str, arguments: dict) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        type="function_call", call_id=call_id, name=name, arguments=json.dumps(arguments)
    )


def _message(text: str) -> ResponseOutputMessage:
    content = [ResponseOutputText(type="output_text", text=text, annotations=[])]
    return ResponseOutputMessage(
        id="msg_1", type="message", role="assistant", status="completed", content=content
    )


def _answer(item) -> ModelResponse:
    return ModelResponse(output=[item], usage=Usage(), response_id=None)


def test_an_agent_runs_end_to_end_with_memory_tools(start_run):
    set_tracing_disabled(True)  # no trace export: the test reaches no network
    inv = start_run("hi")
    model = ScriptedModel()
    agent = Agent(name="Support", model=model, tools=memory_tools(inv, paths=["users/{user}/"]))
    result = asyncio.run(Runner.run(agent, "Remember that I prefer tea."))
    assert result.final_output == "I remember: Alice prefers tea"
    assert model.tool_names == ["search_memory", "save_memory", "forget_memory"]
    [fact] = inv.memory.list()
    assert (fact.path, fact.written_by) == ("users/alice/", "model")
