"""The demo that `make run` seeds, through the public HTTP API as an agent runtime would.

An agent ("Concierge") with facts in shared folders and two people's folders (one of them
Turkish), a fact corrected once, a file memory (a handbook) edited over several runs so it
has history, and a thread with ended runs and one still running. The browser tests seed
the same demo, so the screenshots show what a newcomer sees.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import count
from typing import Any

import requests

TIMEOUT = 10
SHARED_FACTS = [
    ("policies/", "Refunds are possible within 30 days with the receipt.", ["refunds"]),
    ("policies/", "Support answers in English and Turkish.", ["languages"]),
    ("policies/travel/", "Checked luggage is limited to 23 kg on economy fares.", ["luggage"]),
    ("faq/", "The office in İzmir opens at nine and closes at six.", []),
]
AYSE_FACTS = [
    ("Ayşe İstanbul'da yaşıyor ve sabahları çay içmeyi sever.", ["profile"]),
    ("Ayşe pencere kenarı koltuk tercih ediyor.", ["travel"]),
    ("Ayşe'nin kızı Elif Ankara'da üniversitede okuyor.", ["family"]),
]
BOB_FACTS = [
    ("Bob prefers metric units and short answers.", ["style"]),
    ("Bob is allergic to peanuts; mention it when booking meals.", ["health"]),
]
HANDBOOK_GUIDE = "The team handbook: how we answer customers. Read guide.md first."
HANDBOOK = {
    "guide.md": "# How we answer\n\nGreet the customer by name.\nAnswer in their language.\n",
    "escalation.md": "# Escalation\n\nRefunds over 500 EUR go to a supervisor.\n",
}


@dataclass
class Demo:
    """What the seed made: the ids a test or a newcomer opens."""

    agent_id: str = ""
    handbook_id: str = ""
    thread_ids: list[str] = field(default_factory=list)
    run_ids: list[str] = field(default_factory=list)
    facts: dict[str, str] = field(default_factory=dict)  # a fact's text -> its id


class _Http:
    """JSON calls to one memoryhub with one credential; any refusal stops the seed."""

    def __init__(self, base_url: str, headers: dict[str, str]) -> None:
        self.base_url = base_url.rstrip("/")
        self.session = requests.Session()
        self.session.headers.update(headers)

    def __call__(self, method: str, path: str, body: Any = None) -> dict:
        response = self.session.request(method, self.base_url + path, json=body, timeout=TIMEOUT)
        if response.status_code >= 400:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text}")
        return response.json() if response.content else {}


def seed(base_url: str, api_key: str) -> Demo:
    """Seed the demo into the workspace of ``api_key`` (a write key) at ``base_url``."""
    api = _Http(base_url, {"Authorization": f"Bearer {api_key}"})
    demo = Demo()
    demo.agent_id = api("POST", "/api/v1/agents", {"name": "Concierge"})["id"]
    demo.handbook_id = api(
        "POST",
        "/api/v1/memories",
        {
            "name": "Team handbook",
            "type": "postgres",
            "guide": HANDBOOK_GUIDE,
            "always_load": ["guide.md"],
            "labels": ["support"],
        },
    )["id"]
    mounts = [{"name": "handbook", "memory_id": demo.handbook_id, "access": "write"}]
    ayse = _thread(api, demo, "ayse", mounts)
    bob = _thread(api, demo, "bob", [])

    with _run(api, demo, ayse, "Merhaba, İstanbul'dan yazıyorum.") as run:
        for path, text, tags in SHARED_FACTS:
            _save(run, demo, {"path": path, "text": text, "tags": tags})
        for text, tags in AYSE_FACTS:
            _save(run, demo, {"path": "users/{user}/", "text": text, "tags": tags})
        for path, text in HANDBOOK.items():
            run.tool("memory_file_create", {"path": path, "file_text": text})
    with _run(api, demo, ayse, "Artık İzmir'de yaşıyorum.") as run:
        first = demo.facts[AYSE_FACTS[0][0]]
        moved = "Ayşe İzmir'de yaşıyor ve sabahları çay içmeyi sever."
        _save(run, demo, {"path": "users/{user}/", "text": moved, "replaces": first})
        run.tool(
            "memory_file_str_replace",
            {
                "path": "escalation.md",
                "old_str": "500 EUR",
                "new_str": "300 EUR, or any refund without a receipt,",
            },
        )
        run.tool(
            "memory_file_insert",
            {"path": "guide.md", "insert_line": 4, "insert_text": "Never promise a date.\n"},
        )
    with _run(api, demo, bob, "Hi, booking a flight for next week.") as run:
        for text, tags in BOB_FACTS:
            _save(run, demo, {"path": "users/{user}/", "text": text, "tags": tags})
    _run(api, demo, ayse, "Elif için de bilet alabilir miyiz?")  # left running, in progress
    return demo


def _thread(api: _Http, demo: Demo, person: str, mounts: list[dict]) -> str:
    body = {"agent_id": demo.agent_id, "end_user": person, "memories": mounts}
    thread_id: str = api("POST", "/api/v1/threads", body)["id"]
    demo.thread_ids.append(thread_id)
    return thread_id


class _Run:
    """A run accepted on a thread: its facts and tool calls go out with its token."""

    _call_ids = count(1)

    def __init__(self, api: _Http, demo: Demo, thread_id: str, input: str) -> None:
        self.api = api
        accepted = api("POST", f"/api/v1/threads/{thread_id}/runs", {"input": input})
        self.run_id = accepted["id"]
        self.as_run = _Http(api.base_url, {"x-agentos-run-token": accepted["token"]})
        demo.run_ids.append(self.run_id)

    def __enter__(self) -> _Run:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self.api("POST", f"/api/v1/runs/{self.run_id}/end")

    def tool(self, name: str, arguments: dict) -> str:
        call = {"id": f"demo-{next(self._call_ids)}", "name": name, "arguments": arguments}
        content: str = self.as_run("POST", f"/api/v1/runs/{self.run_id}/tool-calls", call)[
            "content"
        ]
        if content.startswith("error"):
            raise RuntimeError(f"{name}: {content}")
        return content


def _run(api: _Http, demo: Demo, thread_id: str, input: str) -> _Run:
    return _Run(api, demo, thread_id, input)


def _save(run: _Run, demo: Demo, body: dict) -> None:
    fact = run.as_run("POST", "/v0/memory/facts", body)
    demo.facts[body["text"]] = fact["id"]
