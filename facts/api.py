"""/v0/memory: the facts API for agent runtimes, authenticated by run token only."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from facts import paths, serializers
from facts.context import build_context, given_paths
from facts.representations import fact_json, search_json, version_json
from facts.scope import FactScope, for_run
from facts.services import reading, writing
from facts.tools import Toolbox
from memoryhub.auth import RunTokenAuthentication
from memoryhub.permissions import CanRead, principal_of
from memoryhub.principals import Principal
from memoryhub.rules import parse
from memoryhub.schema import errors

# What a path can meet in a run: another end user's folder, users/{user}/ without one.
OTHER_USER = {403: "The path is another end user's folder (other_user)."}
NO_USER = "users/{user}/ in a run without an end user (no_user)"
PATHS = errors(OTHER_USER, {409: NO_USER + "."})


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


def search_answer(scope: FactScope, data: dict) -> dict:
    """A search's answer from its checked input (shared with the staff API)."""
    folder = paths.resolve(data["path"], scope.viewer)
    found = reading.search_facts(
        scope, data["query"], folders=[folder], tags=data.get("tags"), k=data["k"]
    )
    return {"facts": search_json(found)}


def list_answer(scope: FactScope, request: Request) -> dict:
    """``?path=&tags=a,b&limit=&before=`` -> one page, newest first."""
    page = reading.list_facts(
        scope, **parse(serializers.FactListQuerySerializer, request.query_params)
    )
    return {"facts": [fact_json(f) for f in page.facts], "next": page.next}


def versions_answer(scope: FactScope, fact_id: str) -> dict:
    fact, versions = reading.fact_versions(scope, fact_id)
    return {"versions": [version_json(v, fact.created_at) for v in versions]}


class FactListView(RunView):
    @PATHS
    @extend_schema(
        summary="List facts, newest first",
        parameters=[serializers.FactListQuerySerializer],
        responses={200: serializers.FactPageSerializer},
    )
    def get(self, request: Request) -> Response:
        return Response(list_answer(self.scope, request))

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
        request=serializers.FactWriteSerializer,
        responses={201: serializers.FactSerializer, 200: serializers.FactSerializer},
    )
    def post(self, request: Request) -> Response:
        data = parse(serializers.FactWriteSerializer, request.data)
        written = writing.write_fact(self.principal, self.scope, **data)
        return Response(
            version_json(written.version, written.created_at),
            status=201 if written.created else 200,
        )


class FactDetailView(RunView):
    @extend_schema(summary="Get a fact", responses={200: serializers.FactSerializer})
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
        responses={200: serializers.FactVersionsSerializer},
    )
    def get(self, request: Request, fact_id: str) -> Response:
        return Response(versions_answer(self.scope, fact_id))


class SearchView(RunView):
    @PATHS
    @extend_schema(
        summary="Full-text search, best first",
        request=serializers.FactSearchSerializer,
        responses={200: serializers.FactSearchResultsSerializer},
    )
    def post(self, request: Request) -> Response:
        return Response(
            search_answer(self.scope, parse(serializers.FactSearchSerializer, request.data))
        )


class ContextView(RunView):
    @PATHS
    @extend_schema(
        summary="The <memory> block for a prompt",
        request=serializers.FactContextSerializer,
        responses={200: serializers.FactContextBlockSerializer},
    )
    def post(self, request: Request) -> Response:
        data = parse(serializers.FactContextSerializer, request.data)
        return Response({"context": build_context(self.scope, **data)})


def paths_param(request: Request) -> list[str]:
    """``?paths=a/&paths=b/`` or ``?paths=a/,b/`` (paths never hold commas), normalized."""
    if "paths" not in request.query_params:
        return given_paths(None)
    values = request.query_params.getlist("paths")
    return given_paths([p for value in values for p in value.split(",")])


TOOLS_PATHS = OpenApiParameter(
    "paths",
    str,
    many=True,
    description="The folders (1-20) the tools are confined to: repeated, or comma-separated. "
    "Left out: the whole memory. With several, each tool takes a path argument restricted "
    "to exactly these.",
)


class ToolsView(RunView):
    @PATHS
    @extend_schema(
        summary="The memory tools' OpenAI function definitions",
        parameters=[TOOLS_PATHS],
        responses={200: serializers.FactToolDefinitionsSerializer},
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
        request=serializers.FactToolCallSerializer,
        responses={200: serializers.FactToolMessageSerializer},
    )
    def post(self, request: Request) -> Response:
        data = parse(serializers.FactToolCallSerializer, request.data)
        toolbox = Toolbox(self.principal, data.get("paths", given_paths(None)))
        return Response(toolbox.call(data["tool_call"]))
