"""/v0/memory: the facts API for agent runtimes, authenticated by run token only."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from facts import openapi, paths, validation
from facts.context import build_context
from facts.representations import fact_json, search_json, version_json
from facts.scope import FactScope, for_run
from facts.services import reading, writing
from facts.tools import Toolbox
from memoryhub.api.base import body
from memoryhub.auth import RunTokenAuthentication
from memoryhub.permissions import CanRead, principal_of
from memoryhub.principals import Principal
from memoryhub.schema import errors

# What a path can meet in a run: another end user's folder, users/{user}/ without one.
OTHER_USER = {403: "The path is another end user's folder (other_user)."}
NO_USER = "users/{user}/ in a run without an end user (no_user)"
PATHS = errors(OTHER_USER, {409: NO_USER + "."})

SEARCH_FIELDS = {"query", "path", "tags", "k"}


class RunView(APIView):
    """``x-agentos-run-token`` only; a missing token is 401. Services check run vs read."""

    authentication_classes = [RunTokenAuthentication]
    permission_classes = [CanRead]

    @property
    def principal(self) -> Principal:
        return principal_of(self.request)

    @property
    def scope(self) -> FactScope:
        return for_run(self.principal)


def search_request(scope: FactScope, data: dict) -> list:
    """``{query, path?, tags?, k?}`` -> the matching facts (shared with the staff API)."""
    folder = paths.resolve(data.get("path", ""), scope.viewer)
    tags = validation.tags(data["tags"]) if data.get("tags") is not None else None
    return reading.search_facts(
        scope,
        validation.query(data.get("query")),
        folders=[folder],
        tags=tags,
        k=validation.k(data.get("k")),
    )


def list_request(scope: FactScope, params) -> dict:
    """``?path=&tags=a,b&limit=&before=`` -> one page, newest first."""
    page = reading.list_facts(
        scope,
        path=params.get("path", ""),
        tags=validation.tags_param(params.get("tags")),
        limit=validation.limit(params.get("limit")),
        before=params.get("before"),
    )
    return {"facts": [fact_json(f) for f in page.facts], "next": page.next}


def versions_answer(scope: FactScope, fact_id: str) -> dict:
    fact, versions = reading.fact_versions(scope, fact_id)
    return {"versions": [version_json(v, fact.created_at) for v in versions]}


class FactListView(RunView):
    @PATHS
    @extend_schema(
        summary="List facts, newest first",
        parameters=openapi.LIST_PARAMETERS,
        responses={200: openapi.FactPageSerializer},
    )
    def get(self, request: Request) -> Response:
        return Response(list_request(self.scope, request.query_params))

    @errors(
        OTHER_USER,
        {
            404: "replaces names no fact this run can see.",
            409: "The memory holds facts.max_facts_per_agent facts (memory_full), the eval's "
            "root run has ended (eval_ended), or " + NO_USER + ".",
        },
    )
    @extend_schema(
        summary="Save a fact (or a new version of one)",
        description="201 with the written version; 200 with the first write's answer when "
        "the same key was already written in this run.",
        request=openapi.FactWriteSerializer,
        responses={201: openapi.FactSerializer, 200: openapi.FactSerializer},
    )
    def post(self, request: Request) -> Response:
        data = body(request, writing.WRITE_FIELDS)
        written = writing.write_fact(self.principal, self.scope, data)
        return Response(
            version_json(written.version, written.created_at),
            status=201 if written.created else 200,
        )


class FactDetailView(RunView):
    @extend_schema(summary="Get a fact", responses={200: openapi.FactSerializer})
    def get(self, request: Request, fact_id: str) -> Response:
        return Response(fact_json(reading.get_fact(self.scope, fact_id)))

    @errors({409: "The eval's root run has ended (eval_ended)."})
    @extend_schema(summary="Delete a fact and all its versions", responses={204: None})
    def delete(self, request: Request, fact_id: str) -> Response:
        writing.delete_fact(self.principal, self.scope, fact_id)
        return Response(status=204)


class FactVersionsView(RunView):
    @extend_schema(
        summary="Every version of a fact, newest first",
        responses={200: openapi.FactVersionsSerializer},
    )
    def get(self, request: Request, fact_id: str) -> Response:
        return Response(versions_answer(self.scope, fact_id))


class SearchView(RunView):
    @PATHS
    @extend_schema(
        summary="Full-text search, best first",
        request=openapi.FactSearchSerializer,
        responses={200: openapi.FactSearchResultsSerializer},
    )
    def post(self, request: Request) -> Response:
        data = body(request, SEARCH_FIELDS)
        return Response({"facts": search_json(search_request(self.scope, data))})


class ContextView(RunView):
    @PATHS
    @extend_schema(
        summary="The <memory> block for a prompt",
        request=openapi.FactContextSerializer,
        responses={200: openapi.FactContextBlockSerializer},
    )
    def post(self, request: Request) -> Response:
        data = body(request, {"query", "paths", "k"})
        context = build_context(self.scope, data.get("query"), data.get("paths"), data.get("k"))
        return Response({"context": context})


def paths_param(request: Request) -> list[str] | None:
    """``?paths=a/&paths=b/`` or ``?paths=a/,b/`` (paths never hold commas); absent: None."""
    if "paths" not in request.query_params:
        return None
    return [p for value in request.query_params.getlist("paths") for p in value.split(",")]


class ToolsView(RunView):
    @PATHS
    @extend_schema(
        summary="The memory tools' OpenAI function definitions",
        parameters=openapi.TOOLS_PARAMETERS,
        responses={200: openapi.FactToolDefinitionsSerializer},
    )
    def get(self, request: Request) -> Response:
        toolbox = Toolbox(self.principal, paths_param(request))
        return Response({"definitions": toolbox.definitions()})


class ToolCallView(RunView):
    @errors(
        OTHER_USER,
        {
            409: "This tool call id was used with other arguments or paths "
            "(tool_call_reused), or " + NO_USER + "."
        },
    )
    @extend_schema(
        summary="Run one memory tool call",
        description="Answers the tool message; a failed tool answers error: <code>: <message>"
        " as its content. Each tool_call.id runs at most once per run (shared with"
        " /api/v1/runs/{id}/tool-calls): the same id again answers the first result, with"
        " other arguments or paths it is 409 tool_call_reused.",
        request=openapi.FactToolCallSerializer,
        responses={200: openapi.FactToolMessageSerializer},
    )
    def post(self, request: Request) -> Response:
        data = body(request, {"paths", "tool_call"}, required={"tool_call"})
        toolbox = Toolbox(self.principal, data.get("paths"))
        return Response(toolbox.call(data["tool_call"]))
