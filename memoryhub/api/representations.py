"""How shared objects look on the wire."""

from __future__ import annotations

from datetime import datetime

from memoryhub.etags import etag_for
from memoryhub.models import Agent, EndUser, Run, Thread


def iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def agent_json(agent: Agent) -> dict:
    return {
        "id": agent.id,
        "name": agent.name,
        "toolset": agent.toolset,
        "memory_mounts": agent.memory_mounts,
        "etag": etag_for(agent.version),
        "created_at": iso(agent.created_at),
        "updated_at": iso(agent.updated_at),
    }


def end_user_json(end_user: EndUser) -> dict:
    return {"id": end_user.external_id, "created_at": iso(end_user.created_at)}


def thread_json(thread: Thread) -> dict:
    return {
        "id": thread.id,
        "agent_id": thread.agent_id,
        "end_user": thread.end_user.external_id if thread.end_user else None,
        "status": thread.status,
        "forked_from": thread.forked_from_id,
        "etag": etag_for(thread.version),
        "created_at": iso(thread.created_at),
        "updated_at": iso(thread.updated_at),
    }


def run_json(run: Run) -> dict:
    return {
        "id": run.id,
        "thread_id": run.thread_id,
        "agent_id": run.agent_id,
        "status": run.status,
        "end_user": run.end_user.external_id if run.end_user else None,
        "parent_run_id": run.parent_run_id,
        "eval": run.is_eval,
        "inline": run.inline,
        "created_at": iso(run.created_at),
        "ended_at": iso(run.ended_at),
    }
