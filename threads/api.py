"""/api/v1/threads and /api/v1/runs: conversations, accepting and ending runs."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from memoryhub.api.base import ApiView, RunOrKeyView, body, with_etag
from memoryhub.api.pagination import Pagination
from memoryhub.api.representations import run_json, thread_json
from memoryhub.permissions import CanRead, CanRun, ReadOrRun
from threads.services import runs, threads


class ThreadListView(ApiView):
    permission_classes = [ReadOrRun]

    @extend_schema(summary="List threads", responses={200: dict})
    def get(self, request: Request) -> Response:
        qs = threads.list_threads(self.principal)
        for param, lookup in (
            ("agent_id", "agent_id"),
            ("end_user", "end_user__external_id"),
            ("status", "status"),
        ):
            if param in request.query_params:
                qs = qs.filter(**{lookup: request.query_params[param]})
        paginator = Pagination()
        page = paginator.paginate_queryset(qs, request, self)
        return paginator.get_paginated_response([thread_json(t) for t in page])

    @extend_schema(summary="Create a thread", request=dict, responses={201: dict})
    def post(self, request: Request) -> Response:
        data = body(request, {"agent_id", "end_user"}, required={"agent_id"})
        thread = threads.create_thread(self.principal, data["agent_id"], data.get("end_user"))
        return with_etag(thread_json(thread), thread.version, status=201)


class ThreadDetailView(ApiView):
    permission_classes = [CanRead]

    @extend_schema(summary="Get a thread", responses={200: dict})
    def get(self, request: Request, thread_id: str) -> Response:
        thread = threads.get_thread(self.principal, thread_id)
        return with_etag(thread_json(thread), thread.version)


class ThreadForkView(ApiView):
    permission_classes = [CanRun]

    @extend_schema(summary="Fork a thread", request=None, responses={201: dict})
    def post(self, request: Request, thread_id: str) -> Response:
        body(request, set())
        thread = threads.fork_thread(self.principal, thread_id)
        return with_etag(thread_json(thread), thread.version, status=201)


class ThreadArchiveView(ApiView):
    permission_classes = [CanRun]

    @extend_schema(summary="Archive a thread", request=None, responses={200: dict})
    def post(self, request: Request, thread_id: str) -> Response:
        body(request, set())
        thread = threads.archive_thread(
            self.principal, thread_id, request.META.get("HTTP_IF_MATCH")
        )
        return with_etag(thread_json(thread), thread.version)


class RunAcceptView(ApiView):
    permission_classes = [CanRun]
    fields = {"input", "parent_run_id", "eval", "history_compacted", "inline"}

    @extend_schema(summary="Accept a run on a thread", request=dict, responses={201: dict})
    def post(self, request: Request, thread_id: str) -> Response:
        data = body(request, self.fields)
        accepted = runs.accept_run(self.principal, thread_id, **data)
        answer = run_json(accepted.run)
        answer.update(token=accepted.token, mounts=[], context="", tools=[])
        return Response(answer, status=201)


class RunDetailView(RunOrKeyView):
    permission_classes = [CanRead]

    @extend_schema(summary="Get a run", responses={200: dict})
    def get(self, request: Request, run_id: str) -> Response:
        return Response(run_json(runs.get_run(self.principal, run_id)))


class RunEndView(RunOrKeyView):
    permission_classes = [CanRead]  # a run may end itself; the service checks the rest

    @extend_schema(summary="End a run", request=None, responses={200: dict})
    def post(self, request: Request, run_id: str) -> Response:
        body(request, set())
        return Response(run_json(runs.end_run(self.principal, run_id)))
