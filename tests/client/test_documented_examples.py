"""facts-memory.md's two Python examples, unchanged apart from where ``inv`` and the chat
function come from: ``inv`` is a live run, the chat function a scripted model."""

from __future__ import annotations

import json

import pytest

from tests.client.conftest import scripted_chat, tool_call

pytestmark = pytest.mark.django_db(transaction=True)


def notes(inv):  # the document's example, as written (agentos.Invocation is our Invocation)
    mem = inv.memory.at("users/{user}/" if inv.user else "notes/")
    if inv.input.get("note"):
        mem.remember(inv.input["note"], tags=["note"], key="note")  # key: a resumed run saves once
    found = mem.search(inv.input["query"], k=5)
    return {"found": [fact.text for fact in found]}


def support(inv, chat):  # the document's tools loop; ``inv.llm.chat`` is ``chat`` here
    tools = inv.memory.tools(paths=["users/{user}/"])
    messages = [{"role": "user", "content": inv.input["message"]}]
    while True:
        message = chat(messages, tools=tools.definitions)["choices"][0]["message"]
        messages.append(message)
        if not message.get("tool_calls"):
            return {"reply": message["content"]}
        for call in message["tool_calls"]:
            messages.append(tools.call(call))  # a {"role": "tool", ...} message


def test_notes_saves_once_per_run_and_finds_it_in_the_users_folder(start_run):
    inv = start_run({"note": "Alice prefers window seats", "query": "window"})
    assert notes(inv) == {"found": ["Alice prefers window seats"]}
    assert notes(inv) == {"found": ["Alice prefers window seats"]}  # a resumed run: saved once
    assert [f.path for f in inv.memory.list()] == ["users/alice/"]


def test_notes_without_an_end_user_uses_the_shared_folder(start_run):
    inv = start_run({"note": "The office opens at nine", "query": "OFFICE"}, end_user=None)
    assert notes(inv) == {"found": ["The office opens at nine"]}
    assert inv.memory.list()[0].path == "notes/"


def test_the_tools_loop_saves_and_searches_through_the_model(start_run):
    inv = start_run({"message": "Remember that I prefer tea."})

    def save(messages, tools):
        assert [t["function"]["name"] for t in tools] == [
            "search_memory",
            "save_memory",
            "forget_memory",
        ]
        arguments = json.dumps({"text": "Alice prefers tea", "tags": ["drink"]})
        return {"content": None, "tool_calls": [tool_call("call_1", "save_memory", arguments)]}

    def search(messages, tools):
        assert messages[-1]["role"] == "tool" and '"saved"' in messages[-1]["content"]
        return {"tool_calls": [tool_call("call_2", "search_memory", '{"query": "tea"}')]}

    def reply(messages, tools):
        found = json.loads(messages[-1]["content"])["facts"]
        return {"content": f"Noted: {found[0]['text']}"}

    assert support(inv, scripted_chat(save, search, reply)) == {"reply": "Noted: Alice prefers tea"}
    [fact] = inv.memory.list()
    assert (fact.path, fact.written_by, fact.tags) == ("users/alice/", "model", ["drink"])


def test_a_refused_tool_call_reaches_the_model_as_text(start_run):
    inv = start_run({"message": "Forget that."})

    def forget(messages, tools):
        return {"tool_calls": [tool_call("call_1", "forget_memory", '{"id": "m_404"}')]}

    def reply(messages, tools):
        return {"content": messages[-1]["content"]}

    answer = support(inv, scripted_chat(forget, reply))
    assert answer["reply"].startswith("error: not_found: ")
