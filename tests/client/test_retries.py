"""Retries through a proxy that loses answers: what is safe to repeat is repeated once and
answers one result; a write without a key is never sent twice."""

from __future__ import annotations

import json

import pytest

from memoryhub.client import MemoryHub, Unavailable
from memoryhub.models import Agent
from tests.client.conftest import tool_call

pytestmark = pytest.mark.django_db(transaction=True)

FACTS = "/v0/memory/facts"


@pytest.fixture
def inv(proxy, api_key):
    hub = MemoryHub(proxy.url, api_key, retries=2, backoff=0)
    thread = hub.create_thread(hub.create_agent("Bot")["id"], end_user="alice")
    run = hub.accept_run(thread["id"], input="hi")
    yield run
    run.close()
    hub.close()


def test_a_read_whose_answer_was_lost_is_asked_again(inv, proxy):
    inv.memory.at("notes/").remember("one", key="one")
    proxy.failures = ["drop"]
    assert [f.text for f in inv.memory.at("notes/").list()] == ["one"]
    assert proxy.count("GET", FACTS) == 2


def test_a_keyed_write_whose_answer_was_lost_saves_once(inv, proxy):
    proxy.failures = ["drop"]
    fact = inv.memory.at("notes/").remember("Alice prefers tea", key="tea")
    assert proxy.count("POST", FACTS) == 2
    assert [f.id for f in inv.memory.list()] == [fact.id]


def test_a_write_without_a_key_is_not_repeated(inv, proxy):
    proxy.failures = ["drop"]
    with pytest.raises(Unavailable) as lost:
        inv.memory.at("notes/").remember("Alice prefers tea")
    assert (lost.value.status, lost.value.reason) == (None, "no_answer")
    assert proxy.count("POST", FACTS) == 1
    assert [f.text for f in inv.memory.list()] == ["Alice prefers tea"]  # it did happen, once


def test_a_tool_call_with_an_id_is_repeated_and_done_once(inv, proxy):
    tools = inv.memory.tools(paths=["notes/"])
    proxy.failures = ["drop"]
    message = tools.call(tool_call("call_1", "save_memory", json.dumps({"text": "tea"})))
    assert proxy.count("POST", "/v0/memory/tools/call") == 2
    assert json.loads(message["content"])["saved"] == inv.memory.list()[0].id
    assert len(inv.memory.list()) == 1


def test_busy_gateways_are_retried_then_reported(inv, proxy):
    proxy.failures = [503, 503]
    assert inv.memory.search("anything") == []
    assert proxy.count("POST", "/v0/memory/search") == 3
    proxy.failures = [503, 503, 503]
    with pytest.raises(Unavailable) as busy:
        inv.memory.search("anything")
    assert (busy.value.status, busy.value.message) == (503, "busy")


def test_an_unkeyed_write_is_not_retried_on_a_busy_gateway(inv, proxy):
    proxy.failures = [503]
    with pytest.raises(Unavailable):
        inv.memory.at("notes/").remember("once")
    assert proxy.count("POST", FACTS) == 1


def test_the_timeout_is_the_callers(proxy, api_key):
    hub = MemoryHub(proxy.url, api_key, timeout=0.2, retries=0)
    proxy.failures = ["slow"]
    with pytest.raises(Unavailable) as late:
        hub.create_agent("Bot")
    assert late.value.reason == "no_answer" and "timed out" in late.value.message
    hub.close()
    proxy.close()  # the late answer still arrives: the agent was made, once
    assert list(Agent.objects.values_list("name", flat=True)) == ["Bot"]
