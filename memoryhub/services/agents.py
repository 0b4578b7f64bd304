"""Agents: their toolset switch and their default memory mounts."""

from __future__ import annotations

import re
from typing import Any

from django.db import transaction

from memoryhub import audit
from memoryhub.errors import ApiError
from memoryhub.models import Agent, Memory, Permission
from memoryhub.principals import Principal
from memoryhub.services.common import bump_version, get_in_workspace, validate_name
from memoryhub.tools import MOUNT_NAME_PATTERN, TOOL_KEYS

_MOUNT_NAME_RE = re.compile(MOUNT_NAME_PATTERN)
MOUNT_FIELDS = {"name", "memory_id", "access", "recall"}


def normalize_toolset(value: Any) -> dict:
    if value is None:
        return {"enabled": True, "disabled_tools": []}
    if not isinstance(value, dict) or set(value) - {"enabled", "disabled_tools"}:
        raise ApiError(422, "toolset is {enabled: bool, disabled_tools: [tool keys]}")
    enabled = value.get("enabled", True)
    disabled = value.get("disabled_tools", [])
    if not isinstance(enabled, bool):
        raise ApiError(422, "toolset.enabled must be true or false")
    if not isinstance(disabled, list) or not all(isinstance(k, str) for k in disabled):
        raise ApiError(422, "toolset.disabled_tools must be a list of tool keys")
    unknown = sorted(set(disabled) - set(TOOL_KEYS))
    if unknown:
        raise ApiError(422, f"unknown tool keys: {', '.join(unknown)}")
    return {"enabled": enabled, "disabled_tools": sorted(set(disabled))}


def validate_access(access: Any, field: str = "access") -> str:
    if access not in ("read", "write"):
        raise ApiError(422, f"{field} must be read or write")
    return access


def validate_recall(recall: Any, field: str = "recall") -> bool:
    if not isinstance(recall, bool):
        raise ApiError(422, f"{field} must be true or false")
    return recall


def validate_mount(principal: Principal, mount: Any, where: str) -> dict:
    """One mount {name, memory_id, access, recall?} of a memory in the principal's workspace."""
    if not isinstance(mount, dict):
        raise ApiError(422, f"{where} must be an object")
    unknown = sorted(set(mount) - MOUNT_FIELDS)
    if unknown:
        raise ApiError(422, f"{where}: unknown fields {', '.join(unknown)}")
    name, memory_id = mount.get("name"), mount.get("memory_id")
    access, recall = mount.get("access", "read"), mount.get("recall", True)
    if not isinstance(name, str) or not _MOUNT_NAME_RE.fullmatch(name):
        raise ApiError(422, f"{where}.name must match {MOUNT_NAME_PATTERN}")
    validate_access(access, f"{where}.access")
    validate_recall(recall, f"{where}.recall")
    if (
        not isinstance(memory_id, str)
        or not Memory.objects.filter(workspace_id=principal.workspace_id, pk=memory_id).exists()
    ):
        raise ApiError(422, f"{where}.memory_id names no memory of this workspace")
    return {"name": name, "memory_id": memory_id, "access": access, "recall": recall}


def normalize_mounts(
    principal: Principal, value: Any, field: str = "memory_mounts", *, unique: bool = True
) -> list:
    """Validated mounts; ``unique`` refuses a repeated name or memory here (422)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ApiError(422, f"{field} must be a list")
    mounts = [validate_mount(principal, m, f"{field}[{i}]") for i, m in enumerate(value)]
    for key in ("name", "memory_id") if unique else ():
        values = [m[key] for m in mounts]
        if len(values) != len(set(values)):
            raise ApiError(422, f"{field}: each {key} may appear once")
    return mounts


def create_agent(principal: Principal, data: dict) -> Agent:
    principal.require(Permission.WRITE)
    with transaction.atomic():
        agent = Agent.objects.create(
            workspace=principal.workspace,
            name=validate_name(data.get("name")),
            toolset=normalize_toolset(data.get("toolset")),
            memory_mounts=normalize_mounts(principal, data.get("memory_mounts")),
        )
        audit.record(principal, "agent.create", "agent", agent.id)
    return agent


def get_agent(principal: Principal, agent_id: str) -> Agent:
    principal.require(Permission.READ)
    return get_in_workspace(Agent.objects.all(), principal, agent_id, "agent")


def list_agents(principal: Principal):
    principal.require(Permission.READ)
    return Agent.objects.filter(workspace_id=principal.workspace_id).order_by("-created_at", "id")


def update_agent(principal: Principal, agent_id: str, data: dict, if_match: str) -> Agent:
    principal.require(Permission.WRITE)
    changes: dict[str, Any] = {}
    if "name" in data:
        changes["name"] = validate_name(data["name"])
    if "toolset" in data:
        changes["toolset"] = normalize_toolset(data["toolset"])
    if "memory_mounts" in data:
        changes["memory_mounts"] = normalize_mounts(principal, data["memory_mounts"])
    with transaction.atomic():
        agent = get_in_workspace(Agent.objects.all(), principal, agent_id, "agent", lock=True)
        bump_version(agent, if_match, **changes)
        audit.record(principal, "agent.update", "agent", agent.id, fields=sorted(changes))
    return agent


def delete_agent(principal: Principal, agent_id: str, if_match: str) -> None:
    principal.require(Permission.WRITE)
    with transaction.atomic():
        agent = get_in_workspace(Agent.objects.all(), principal, agent_id, "agent", lock=True)
        bump_version(agent, if_match)
        audit.record(principal, "agent.delete", "agent", agent.id)
        agent.delete()
