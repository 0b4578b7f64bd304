"""What a run received is kept with it: the exact context block and tools of its acceptance
(within memory.context_bytes), its tool calls' arguments; erasing its person clears them."""

from __future__ import annotations

import pytest

from memoryhub.models import Run, ToolCall
from tests.filememory.conftest import limits
from tests.threads.test_run_memory import accept, call, file_memory, put_file
from threads.services import runs

pytestmark = pytest.mark.django_db


def team_thread(owner, runner, agent, end_user: str | None = None) -> str:
    memory_id = file_memory(owner, always_load=["prefs.md"])
    put_file(owner, memory_id, "prefs.md", "language: Türkçe\n" * 40)
    mounts = [{"name": "team", "memory_id": memory_id, "access": "write"}]
    person = {"end_user": end_user} if end_user else {}
    response = runner.post("/api/v1/threads", {"agent_id": agent.id, "memories": mounts, **person})
    assert response.status_code == 201, response.content
    return response.json()["id"]


def test_acceptance_keeps_the_exact_context_and_tools_it_answered(owner, runner, agent):
    answered = accept(runner, team_thread(owner, runner, agent))
    kept = Run.objects.get(pk=answered["id"])
    assert "language: Türkçe" in answered["context"]
    assert kept.context == answered["context"]
    assert kept.tools_offered == answered["tools"]
    assert "memory_file_view" in [t["function"]["name"] for t in kept.tools_offered]


def test_the_kept_context_is_within_memory_context_bytes(owner, runner, agent):
    thread_id = team_thread(owner, runner, agent)
    with limits(context_bytes=1000):  # the whole block would take about 1100 bytes
        answered = accept(runner, thread_id)
    kept = Run.objects.get(pk=answered["id"]).context
    assert kept == answered["context"] and 0 < len(kept.encode()) <= 1000
    assert "Left out for space" in kept and "language: Türkçe" not in kept


def test_a_context_over_the_budget_is_cut_on_a_character(owner, runner, agent, monkeypatch):
    """Should a kind overshoot, the run is given and keeps the same cut text."""
    monkeypatch.setattr(runs, "build_run_context", lambda *a, **k: "ğ" * 200)  # 400 bytes
    thread_id = team_thread(owner, runner, agent)
    with limits(context_bytes=101):
        answered = accept(runner, thread_id)
    assert answered["context"] == "ğ" * 50
    assert Run.objects.get(pk=answered["id"]).context == "ğ" * 50


def test_a_run_without_mounts_keeps_that_it_received_nothing(runner, thread):
    answered = accept(runner, thread.id)
    kept = Run.objects.get(pk=answered["id"])
    assert (kept.context, kept.tools_offered) == ("", [])


def test_a_tool_calls_arguments_are_kept(owner, runner, agent):
    run = accept(runner, team_thread(owner, runner, agent))
    call(run, "memory_file_view", {"path": "prefs.md"}, call_id="c1")
    assert ToolCall.objects.get(run_id=run["id"], call_id="c1").arguments == {"path": "prefs.md"}


def test_erasure_clears_what_the_persons_runs_received_and_no_one_elses(owner, runner, agent):
    alice = accept(runner, team_thread(owner, runner, agent, "alice"), input="I am Alice")
    bob = accept(runner, team_thread(owner, runner, agent, "bob"), input="I am Bob")
    assert owner.delete("/api/v1/end-users/alice").status_code == 200
    erased = Run.objects.get(pk=alice["id"])
    assert (erased.input, erased.context, erased.tools_offered) == (None, None, None)
    kept = Run.objects.get(pk=bob["id"])
    assert kept.input == "I am Bob"
    assert kept.context == bob["context"] and "language: Türkçe" in kept.context
    assert kept.tools_offered == bob["tools"]


def test_an_erasure_during_acceptance_is_not_undone(owner, runner, agent, monkeypatch):
    """The context is built after the run commits: an erasure meanwhile keeps it cleared."""
    build = runs.build_run_context

    def erase_then_build(run, *args, **kwargs):
        assert owner.delete("/api/v1/end-users/alice").status_code == 200
        return build(run, *args, **kwargs)

    thread_id = team_thread(owner, runner, agent, "alice")
    monkeypatch.setattr(runs, "build_run_context", erase_then_build)
    answered = accept(runner, thread_id)
    assert Run.objects.get(pk=answered["id"]).context is None
