"""Agents, memories and providers made from a body's fields, checked as the API checks
them (its request serializers), then made by the typed services: for tests and the bench."""

from __future__ import annotations

from typing import Any

from memoryhub.api.serializers import AgentChange, AgentCreate, MemoryChange, MemoryCreate
from memoryhub.models import Agent, Memory, MemoryProvider
from memoryhub.principals import Principal
from memoryhub.rules import parse
from memoryhub.services import agents, memories
from records.serializers import MemoryProviderCreateSerializer
from records.services import providers


def create_agent(principal: Principal, fields: dict[str, Any]) -> Agent:
    return agents.create(principal, **parse(AgentCreate, fields))


def update_agent(principal: Principal, agent_id: str, fields: dict, if_match: str) -> Agent:
    return agents.update(principal, agent_id, if_match, **parse(AgentChange, fields))


def create_memory(principal: Principal, fields: dict[str, Any]) -> Memory:
    return memories.create(principal, **parse(MemoryCreate, fields))


def update_memory(principal: Principal, memory_id: str, fields: dict, if_match: str) -> Memory:
    return memories.update(principal, memory_id, if_match, **parse(MemoryChange, fields))


def create_provider(principal: Principal, fields: dict[str, Any]) -> MemoryProvider:
    return providers.add_provider(principal, **parse(MemoryProviderCreateSerializer, fields))
