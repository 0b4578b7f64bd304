"""/api/v1/agents/{agent_id}/facts: staff read and erase an agent's facts (API keys).

``read`` lists, searches and reads; ``write`` deletes. Staff see every end user's folder
of the agent's real memory, never an eval's temporary memory.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from facts import serializers
from facts.api import list_answer, search_answer, versions_answer
from facts.representations import fact_json
from facts.scope import FactScope, for_staff
from facts.services import reading, writing
from memoryhub.api.base import ApiView
from memoryhub.models import Permission
from memoryhub.permissions import CanRead, ReadOrWrite
from memoryhub.rules import parse


class StaffView(ApiView):
    def scope(self, agent_id: str) -> FactScope:
        self.principal.require(Permission.READ)
        return for_staff(self.principal, agent_id)


class StaffFactListView(StaffView):
    permission_classes = [CanRead]

    @extend_schema(
        summary="List an agent's facts, newest first",
        parameters=[serializers.FactListQuerySerializer],
        responses={200: serializers.FactPageSerializer},
    )
    def get(self, request: Request, agent_id: str) -> Response:
        return Response(list_answer(self.scope(agent_id), request))


class StaffSearchView(StaffView):
    """``GET ?query=&path=&tags=a,b&k=`` or ``POST {query, path?, tags?, k?}``."""

    permission_classes = [CanRead]

    @extend_schema(
        summary="Search an agent's facts",
        parameters=[serializers.FactSearchQuerySerializer],
        responses={200: serializers.FactSearchResultsSerializer},
    )
    def get(self, request: Request, agent_id: str) -> Response:
        data = parse(serializers.FactSearchQuerySerializer, request.query_params)
        return Response(search_answer(self.scope(agent_id), data))

    @extend_schema(
        summary="Search an agent's facts",
        request=serializers.FactSearchSerializer,
        responses={200: serializers.FactSearchResultsSerializer},
    )
    def post(self, request: Request, agent_id: str) -> Response:
        data = parse(serializers.FactSearchSerializer, request.data)
        return Response(search_answer(self.scope(agent_id), data))


class StaffFactDetailView(StaffView):
    permission_classes = [ReadOrWrite]

    @extend_schema(
        summary="Get one of an agent's facts", responses={200: serializers.FactSerializer}
    )
    def get(self, request: Request, agent_id: str, fact_id: str) -> Response:
        return Response(fact_json(reading.get_fact(self.scope(agent_id), fact_id)))

    @extend_schema(summary="Erase a fact and all its versions", responses={204: None})
    def delete(self, request: Request, agent_id: str, fact_id: str) -> Response:
        writing.delete_fact(self.principal, self.scope(agent_id), fact_id)
        return Response(status=204)


class StaffFactVersionsView(StaffView):
    permission_classes = [CanRead]

    @extend_schema(
        summary="Every version of a fact, newest first",
        responses={200: serializers.FactVersionsSerializer},
    )
    def get(self, request: Request, agent_id: str, fact_id: str) -> Response:
        return Response(versions_answer(self.scope(agent_id), fact_id))
