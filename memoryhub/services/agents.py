"""Agents: their toolset switch and their default memory mounts.

The rules of their fields are declared here, once (:class:`~memoryhub.rules.Rule`): the
toolset, a memory mount and its fields, the mount lists of agents and threads. The request
serializers check and document with them (``memoryhub.api.serializers``,
``threads.serializers``); what needs the database, that a mount's memory is one of the
workspace's, is :func:`require_memories`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import Any, TypedDict, Unpack

from django.db import transaction
from django.db.models import QuerySet

from memoryhub import audit
from memoryhub.errors import ApiError
from memoryhub.models import Agent, Memory, Permission
from memoryhub.principals import Principal
from memoryhub.rules import Rule
from memoryhub.services.common import bump_version, get_in_workspace
from memoryhub.tools import MOUNT_NAME_PATTERN, TOOL_KEYS

_MOUNT_NAME_RE = re.compile(MOUNT_NAME_PATTERN)
MOUNT_FIELDS = ("name", "memory_id", "access", "recall")
MOUNT_DEFAULTS = {"access": "read", "recall": True}


# --- the toolset -----------------------------------------------------------------------------


def default_toolset() -> dict:
    return {"enabled": True, "disabled_tools": []}


def normalize_toolset(value: Any) -> dict:
    if value is None:
        return default_toolset()
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


TOOLSET = Rule(
    normalize_toolset,
    {
        "type": "object",
        "properties": {
            "enabled": {
                "type": "boolean",
                "default": True,
                "description": "false offers no memory tools (context and recall stay).",
            },
            "disabled_tools": {
                "type": "array",
                "items": {"$ref": "#/components/schemas/ToolKey"},  # the answers' enum
                "description": "Tool keys never offered to this agent's runs.",
            },
        },
        "additionalProperties": False,
    },
    component="AgentToolsetRequest",
)

# --- memory mounts ---------------------------------------------------------------------------


def validate_mount_name(value: Any, field: str = "name") -> str:
    if not isinstance(value, str) or not _MOUNT_NAME_RE.fullmatch(value):
        raise ApiError(422, f"{field} must match {MOUNT_NAME_PATTERN}")
    return value


def validate_access(access: Any, field: str = "access") -> str:
    if not isinstance(access, str) or access not in ("read", "write"):
        raise ApiError(422, f"{field} must be read or write")
    return access


def validate_recall(recall: Any, field: str = "recall") -> bool:
    if not isinstance(recall, bool):
        raise ApiError(422, f"{field} must be true or false")
    return recall


def validate_memory_id(value: Any, field: str = "memory_id") -> str:
    """A mount's memory id as a value; that it names a memory is :func:`require_memories`'."""
    if not isinstance(value, str):
        raise ApiError(422, f"{field} names no memory of this workspace")
    return value


ACCESS = Rule(
    validate_access, {"type": "string", "enum": ["read", "write"]}, component="MountAccess"
)
RECALL = Rule(validate_recall, {"type": "boolean"})
MOUNT_NAME = Rule(
    validate_mount_name, {"type": "string", "minLength": 1, "pattern": MOUNT_NAME_PATTERN}
)
MEMORY_ID = Rule(validate_memory_id, {"type": "string", "minLength": 1})


def mount_rules(where: str) -> dict[str, Rule]:
    """The rules of one mount's fields, in the order they are checked; their messages name
    the mount ``where`` (``memory_mounts[0]``, ``mount``)."""
    return {
        "name": replace(MOUNT_NAME, check=partial(validate_mount_name, field=f"{where}.name")),
        "access": replace(ACCESS, check=partial(validate_access, field=f"{where}.access")),
        "recall": replace(RECALL, check=partial(validate_recall, field=f"{where}.recall")),
        "memory_id": replace(
            MEMORY_ID, check=partial(validate_memory_id, field=f"{where}.memory_id")
        ),
    }


def check_mount(mount: Any, where: str) -> dict:
    """One mount {name, memory_id, access?, recall?}, its defaults filled in."""
    if not isinstance(mount, dict):
        raise ApiError(422, f"{where} must be an object")
    unknown = sorted(set(mount) - set(MOUNT_FIELDS))
    if unknown:
        raise ApiError(422, f"{where}: unknown fields {', '.join(unknown)}")
    checked = {
        key: rule(mount.get(key, MOUNT_DEFAULTS.get(key)))
        for key, rule in mount_rules(where).items()
    }
    return {key: checked[key] for key in MOUNT_FIELDS}


def check_mounts(value: Any, field: str, *, unique: bool) -> list[dict]:
    """A list of mounts (null: none); ``unique`` refuses a repeated name or memory (422)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ApiError(422, f"{field} must be a list")
    mounts = [check_mount(m, f"{field}[{i}]") for i, m in enumerate(value)]
    for key in ("name", "memory_id") if unique else ():
        values = [m[key] for m in mounts]
        if len(values) != len(set(values)):
            raise ApiError(422, f"{field}: each {key} may appear once")
    return mounts


# The items are the one "memory to mount" component, the body of POST .../memories.
MOUNTS_SCHEMA = {"type": "array", "items": {"$ref": "#/components/schemas/NewMemoryMountRequest"}}
AGENT_MOUNTS = Rule(partial(check_mounts, field="memory_mounts", unique=True), MOUNTS_SCHEMA)


def listed(field: str, mounts: Sequence[dict]) -> dict[str, str]:
    """The memory ids of a list of mounts, by where each was given (``field[i]``)."""
    return {f"{field}[{index}]": mount["memory_id"] for index, mount in enumerate(mounts)}


def require_memories(principal: Principal, memory_ids: dict[str, str]) -> None:
    """422 unless each memory id (by where it was given) names a memory of the workspace."""
    if not memory_ids:
        return
    found = set(
        Memory.objects.filter(
            workspace_id=principal.workspace_id, pk__in=set(memory_ids.values())
        ).values_list("pk", flat=True)
    )
    for where, memory_id in memory_ids.items():
        if memory_id not in found:
            raise ApiError(422, f"{where}.memory_id names no memory of this workspace")


# --- agents ----------------------------------------------------------------------------------


class AgentChanges(TypedDict, total=False):
    name: str
    toolset: dict
    memory_mounts: list[dict]


def create(
    principal: Principal,
    *,
    name: str,
    toolset: dict | None = None,
    memory_mounts: Sequence[dict] = (),
) -> Agent:
    """A new agent of checked fields; each mount's memory must be one of the workspace's."""
    principal.require(Permission.WRITE)
    require_memories(principal, listed("memory_mounts", memory_mounts))
    with transaction.atomic():
        agent = Agent.objects.create(
            workspace=principal.workspace,
            name=name,
            toolset=toolset or default_toolset(),
            memory_mounts=list(memory_mounts),
        )
        audit.record(principal, "agent.create", "agent", agent.id)
    return agent


def get_agent(principal: Principal, agent_id: str) -> Agent:
    principal.require(Permission.READ)
    return get_in_workspace(Agent.objects.all(), principal, agent_id, "agent")


def list_agents(principal: Principal) -> QuerySet[Agent]:
    principal.require(Permission.READ)
    return Agent.objects.filter(workspace_id=principal.workspace_id).order_by("-created_at", "id")


def update(
    principal: Principal, agent_id: str, if_match: str, **changes: Unpack[AgentChanges]
) -> Agent:
    """Change the given checked fields (compare-and-set on ``if_match``)."""
    principal.require(Permission.WRITE)
    if "memory_mounts" in changes:
        require_memories(principal, listed("memory_mounts", changes["memory_mounts"]))
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
