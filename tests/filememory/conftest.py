"""Shared fixtures of the file-memory tests: a file memory and helpers on its accounting."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.conf import settings
from django.db.models import Sum
from django.test import override_settings

from filememory.context import file_context_block
from filememory.models import File, Revision
from memoryhub.models import Memory, Run, Thread
from memoryhub.principals import Principal
from tests.factories import create_memory
from tests.memory_tools import execute_file_tool
from threads.services.runs import accept_run
from threads.services.threads import create_thread


@pytest.fixture
def memory(tenant) -> Memory:
    return create_memory(tenant.owner, {"name": "Team conventions", "type": "postgres"})


def files_url(memory: Memory, path: str = "") -> str:
    base = f"/api/v1/memories/{memory.id}/files"
    return f"{base}/{path}" if path else base


def revisions_url(memory: Memory, suffix: str = "") -> str:
    return f"/api/v1/memories/{memory.id}/revisions{suffix}"


def limits(**values):
    """override_settings for memory.* limits: limits(max_total_bytes=1000)."""
    names = {f"memory.{name}": value for name, value in values.items()}
    return override_settings(MEMORYHUB_SETTINGS={**settings.MEMORYHUB_SETTINGS, **names})


def assert_accounting(memory: Memory) -> Memory:
    """The memory row's byte accounting equals what its files and revisions hold."""
    memory.refresh_from_db()
    files = File.objects.filter(memory=memory)
    revisions = Revision.objects.filter(memory=memory)
    assert memory.file_count == files.count()
    assert memory.content_bytes == (files.aggregate(s=Sum("size"))["s"] or 0)
    assert memory.history_bytes == (revisions.aggregate(s=Sum("size"))["s"] or 0)
    return memory


@dataclass
class Conversation:
    """A thread with a running run: what the threads app will hand the file tools."""

    thread: Thread
    run: Run
    principal: Principal
    memory: Memory
    calls: int = 0

    def tool(self, name: str, access: str = "write", **arguments) -> str:
        self.calls += 1
        return execute_file_tool(
            self.principal,
            self.memory,
            thread_id=self.thread.id,
            run_id=self.run.id,
            tool_call_id=f"call_{self.calls}",
            name=name,
            arguments=arguments,
            access=access,
        )

    def context(self, budget: int = 32 * 1024, full: bool = False) -> str:
        return file_context_block(
            self.memory, thread_id=self.thread.id, budget_bytes=budget, full=full
        )


@pytest.fixture
def converse(tenant, agent, memory):
    """converse() -> a new conversation (thread + running run) on ``memory``."""

    def start() -> Conversation:
        thread = create_thread(tenant.owner, agent.id)
        run = accept_run(tenant.owner, thread.id).run
        return Conversation(thread, run, Principal.for_run(run), memory)

    return start
