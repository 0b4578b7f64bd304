"""/api/v1/agents/{agent_id}/facts: staff read and erase an agent's facts (API keys).

``read`` lists, searches and reads; ``write`` deletes. Staff see every end user's folder
of the agent's real memory, never an eval's temporary memory.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from facts import openapi, validation
from facts.api import SEARCH_FIELDS, list_request, search_request, versions_answer
from facts.representations import fact_json, search_json
from facts.scope import FactScope, for_staff
from facts.services import reading, writing
from memoryhub.api.base import ApiView, body
from memoryhub.models import Permission
from memoryhub.permissions import CanRead, ReadOrWrite


class StaffView(ApiView):
    def scope(self, agent_id: str) -> FactScope:
        self.principal.require(Permission.READ)
        return for_staff(self.principal, agent_id)


class StaffFactListView(StaffView):
    permission_classes = [CanRead]

    @extend_schema(
        summary="List an agent's facts, newest first",
        parameters=openapi.LIST_PARAMETERS,
        responses={200: openapi.FactPageSerializer},
    )
    def get(self, request: Request, agent_id: str) -> Response:
        return Response(list_request(self.scope(agent_id), request.query_params))


class StaffSearchView(StaffView):
    """``GET ?query=&path=&tags=a,b&k=`` or ``POST {query, path?, tags?, k?}``."""

    permission_classes = [CanRead]

    @extend_schema(
        summary="Search an agent's facts",
        parameters=openapi.SEARCH_PARAMETERS,
        responses={200: openapi.FactSearchResultsSerializer},
    )
    def get(self, request: Request, agent_id: str) -> Response:
        params = request.query_params
        data = {name: params[name] for name in SEARCH_FIELDS if name in params}
        if "tags" in data:
            data["tags"] = [t for t in data["tags"].split(",") if t] or None
        if "k" in data:
            data["k"] = validation.from_query(data["k"])
        return self._answer(agent_id, data)

    @extend_schema(
        summary="Search an agent's facts",
        request=openapi.FactSearchSerializer,
        responses={200: openapi.FactSearchResultsSerializer},
    )
    def post(self, request: Request, agent_id: str) -> Response:
        return self._answer(agent_id, body(request, SEARCH_FIELDS))

    def _answer(self, agent_id: str, data: dict) -> Response:
        return Response({"facts": search_json(search_request(self.scope(agent_id), data))})


class StaffFactDetailView(StaffView):
    permission_classes = [ReadOrWrite]

    @extend_schema(summary="Get one of an agent's facts", responses={200: openapi.FactSerializer})
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
        responses={200: openapi.FactVersionsSerializer},
    )
    def get(self, request: Request, agent_id: str, fact_id: str) -> Response:
        return Response(versions_answer(self.scope(agent_id), fact_id))
