"""/api/v1/agents: agents with their toolset and default memory mounts."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from memoryhub.api import serializers as s
from memoryhub.api.base import ApiView, if_match, paginated, with_etag
from memoryhub.api.representations import agent_json
from memoryhub.permissions import ReadOrWrite
from memoryhub.rules import parse
from memoryhub.schema import ETAG, IF_MATCH, PAGE_PARAMETERS, page_of
from memoryhub.services import agents

MOUNTS_RULE = "Each mount's memory_id must name a memory of this workspace (422)."


class AgentListView(ApiView):
    permission_classes = [ReadOrWrite]

    @extend_schema(
        summary="List the workspace's agents",
        parameters=PAGE_PARAMETERS,
        responses={200: page_of("AgentPage", s.Agent)},
    )
    def get(self, request: Request) -> Response:
        rows = agents.list_agents(self.principal)
        return paginated(self, rows, lambda page: [agent_json(a) for a in page])

    @extend_schema(
        summary="Create an agent",
        description=MOUNTS_RULE,
        request=s.AgentCreate,
        parameters=[ETAG],
        responses={201: s.Agent},
    )
    def post(self, request: Request) -> Response:
        agent = agents.create(self.principal, **parse(s.AgentCreate, request.data))
        return with_etag(agent_json(agent), agent.version, status=201)


class AgentDetailView(ApiView):
    permission_classes = [ReadOrWrite]

    @extend_schema(summary="Get an agent", parameters=[ETAG], responses={200: s.Agent})
    def get(self, request: Request, agent_id: str) -> Response:
        agent = agents.get_agent(self.principal, agent_id)
        return with_etag(agent_json(agent), agent.version)

    @extend_schema(
        summary="Change an agent (If-Match)",
        description=MOUNTS_RULE,
        request=s.AgentChange,
        parameters=[IF_MATCH, ETAG],
        responses={200: s.Agent},
    )
    def patch(self, request: Request, agent_id: str) -> Response:
        changes = parse(s.AgentChange, request.data)
        agent = agents.update(self.principal, agent_id, if_match(request), **changes)
        return with_etag(agent_json(agent), agent.version)

    @extend_schema(
        summary="Delete an agent (If-Match)", parameters=[IF_MATCH], responses={204: None}
    )
    def delete(self, request: Request, agent_id: str) -> Response:
        agents.delete_agent(self.principal, agent_id, if_match(request))
        return Response(status=204)
