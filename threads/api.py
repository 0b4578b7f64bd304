"""/api/v1/threads and /api/v1/runs: conversations, accepting and ending runs."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from memoryhub.api.base import ApiView, RunOrKeyView, if_match, paginated, with_etag
from memoryhub.api.representations import run_json, thread_json
from memoryhub.api.serializers import NewMemoryMount
from memoryhub.auth import RunTokenAuthentication
from memoryhub.etags import etag_for
from memoryhub.filters import filter_rows, parameters
from memoryhub.permissions import CanRead, CanRun, ReadOrRun
from memoryhub.rules import NoBody, parse
from memoryhub.schema import ETAG, IF_MATCH, PAGE_PARAMETERS, errors, page_of
from threads import serializers as s
from threads.filters import ThreadFilter
from threads.services import mounts, runs, threads, tool_calls

MOUNTS_CONFLICT = (
    "A name or a memory mounted twice (already_exists), or more mounts than "
    "memory.mounts_per_thread (memory_mount_limit)."
)
ARCHIVED = "The thread is archived (thread_archived)."
MEMORIES_RULE = "Each mount's memory_id must name a memory of this workspace (422)."

# Archiving checks If-Match only when one is given (and the thread is not archived yet).
ARCHIVE_IF_MATCH = OpenApiParameter(
    "If-Match",
    str,
    OpenApiParameter.HEADER,
    description="Optional: the thread's current ETag; 412 when stale.",
)


class ThreadListView(ApiView):
    permission_classes = [ReadOrRun]

    @extend_schema(
        summary="List threads",
        parameters=[*parameters(ThreadFilter), *PAGE_PARAMETERS],
        responses={200: page_of("ThreadPage", s.Thread)},
    )
    def get(self, request: Request) -> Response:
        qs = filter_rows(ThreadFilter, request, threads.list_threads(self.principal))
        return paginated(self, qs, lambda page: [thread_json(t) for t in page])

    @errors({409: MOUNTS_CONFLICT})
    @extend_schema(
        summary="Create a thread",
        description="agent_id must name an agent of this workspace (422). " + MEMORIES_RULE,
        request=s.ThreadCreate,
        parameters=[ETAG],
        responses={201: s.Thread},
    )
    def post(self, request: Request) -> Response:
        thread = threads.create_thread(self.principal, **parse(s.ThreadCreate, request.data))
        return with_etag(thread_json(thread), thread.version, status=201)


class ThreadDetailView(ApiView):
    permission_classes = [CanRead]

    @extend_schema(summary="Get a thread", parameters=[ETAG], responses={200: s.Thread})
    def get(self, request: Request, thread_id: str) -> Response:
        thread = threads.get_thread(self.principal, thread_id)
        return with_etag(thread_json(thread), thread.version)


class ThreadForkView(ApiView):
    permission_classes = [CanRun]

    @errors({409: MOUNTS_CONFLICT})
    @extend_schema(
        summary="Fork a thread",
        description=MEMORIES_RULE,
        request=s.ThreadFork,
        parameters=[ETAG],
        responses={201: s.Thread},
    )
    def post(self, request: Request, thread_id: str) -> Response:
        fields = parse(s.ThreadFork, request.data)
        thread = threads.fork_thread(self.principal, thread_id, **fields)
        return with_etag(thread_json(thread), thread.version, status=201)


class ThreadArchiveView(ApiView):
    permission_classes = [CanRun]

    @extend_schema(
        summary="Archive a thread",
        request=None,
        parameters=[ARCHIVE_IF_MATCH, ETAG],
        responses={200: s.Thread},
    )
    def post(self, request: Request, thread_id: str) -> Response:
        parse(NoBody, request.data)
        thread = threads.archive_thread(
            self.principal, thread_id, request.META.get("HTTP_IF_MATCH")
        )
        return with_etag(thread_json(thread), thread.version)


class RunAcceptView(ApiView):
    permission_classes = [CanRun]

    @errors(
        {
            409: "The thread is archived (thread_archived), the agent's default mounts would "
            "pass memory.mounts_per_thread (memory_mount_limit), or the thread's mounts "
            "changed while the run was accepted."
        }
    )
    @extend_schema(
        summary="Accept a run on a thread",
        description="Freezes the thread's memory mounts for the run and answers the run with"
        " its token (shown only here), its memory context and its memory tools."
        " parent_run_id must name a run of this workspace, and inline needs one (422).",
        request=s.RunAccept,
        responses={201: s.AcceptedRun},
    )
    def post(self, request: Request, thread_id: str) -> Response:
        fields = parse(s.RunAccept, request.data)
        accepted = runs.accept_run(self.principal, thread_id, **fields)
        answer = run_json(accepted.run)
        answer.update(
            token=accepted.token,
            mounts=[mounts.mount_json(m) for m in accepted.mounts],
            context=accepted.context,
            tools=accepted.tools,
        )
        return Response(answer, status=201)


class OwnRunView(ApiView):
    authentication_classes = [RunTokenAuthentication]
    permission_classes = [CanRead]

    @extend_schema(
        summary="The run of this run token",
        description="For a runtime that holds only a run token: the run with its input, its"
        " frozen mounts, and the memory context and tools it received when it was accepted"
        " (empty once its person was erased). x-agentos-run-token only.",
        responses={200: s.OwnRun},
    )
    def get(self, request: Request) -> Response:
        own = runs.own_run(self.principal)
        answer = run_json(own.run)
        answer.update(
            input=own.run.input,
            mounts=[mounts.mount_json(m) for m in own.mounts],
            context=own.context,
            tools=own.tools,
        )
        return Response(answer)


class RunDetailView(RunOrKeyView):
    permission_classes = [CanRead]

    @extend_schema(summary="Get a run", responses={200: s.Run})
    def get(self, request: Request, run_id: str) -> Response:
        return Response(run_json(runs.get_run(self.principal, run_id)))


class RunEndView(RunOrKeyView):
    permission_classes = [CanRead]  # a run may end itself; the service checks the rest

    @errors({403: "An API key without the run permission (a run may end itself)."})
    @extend_schema(summary="End a run", request=None, responses={200: s.Run})
    def post(self, request: Request, run_id: str) -> Response:
        parse(NoBody, request.data)
        return Response(run_json(runs.end_run(self.principal, run_id)))


def _mounts_answer(thread, status: int = 200) -> Response:
    listed = [mounts.mount_json(m) for m in mounts.thread_mounts(thread)]
    return with_etag(
        {"memories": listed, "etag": etag_for(thread.version)}, thread.version, status=status
    )


class ThreadMountListView(ApiView):
    permission_classes = [ReadOrRun]

    @extend_schema(
        summary="List a thread's memory mounts",
        parameters=[ETAG],
        responses={200: s.ThreadMounts},
    )
    def get(self, request: Request, thread_id: str) -> Response:
        thread, _ = mounts.list_thread_mounts(self.principal, thread_id)
        return _mounts_answer(thread)

    @errors({409: "The thread is archived (thread_archived). " + MOUNTS_CONFLICT})
    @extend_schema(
        summary="Mount a memory on a thread (If-Match)",
        description=MEMORIES_RULE,
        request=NewMemoryMount,
        parameters=[IF_MATCH, ETAG],
        responses={201: s.ThreadMounts},
    )
    def post(self, request: Request, thread_id: str) -> Response:
        new = parse(NewMemoryMount, request.data)
        thread = mounts.mount(self.principal, thread_id, if_match(request), **new)
        return _mounts_answer(thread, status=201)


class ThreadMountDetailView(ApiView):
    permission_classes = [ReadOrRun]

    @errors({409: ARCHIVED})
    @extend_schema(
        summary="Change a mount's access or recall (If-Match)",
        request=s.MountChange,
        parameters=[IF_MATCH, ETAG],
        responses={200: s.ThreadMounts},
    )
    def patch(self, request: Request, thread_id: str, name: str) -> Response:
        change = parse(s.MountChange, request.data)
        thread = mounts.change_mount(self.principal, thread_id, name, if_match(request), **change)
        return _mounts_answer(thread)

    @errors({409: ARCHIVED})
    @extend_schema(
        summary="Remove a mount (If-Match)",
        parameters=[IF_MATCH, ETAG],
        responses={200: s.ThreadMounts},
    )
    def delete(self, request: Request, thread_id: str, name: str) -> Response:
        thread = mounts.unmount(self.principal, thread_id, name, if_match(request))
        return _mounts_answer(thread)


class ToolCallView(RunOrKeyView):
    permission_classes = [CanRead]  # each tool checks the permission it needs

    @errors({409: "This tool call id was used with other arguments (tool_call_reused)."})
    @extend_schema(
        summary="Execute one tool call of the model",
        description="Answers the tool message; a failed tool answers error: <code>: <message>"
        " as its content. The same call id again answers the first result without doing the"
        " work twice (409 with other arguments).",
        request=s.RunToolCall,
        responses={200: s.RunToolMessage},
    )
    def post(self, request: Request, run_id: str) -> Response:
        data = parse(s.RunToolCall, request.data)
        call_id, name, arguments = _tool_call_fields(data)
        return Response(
            tool_calls.execute_tool_call(self.principal, run_id, call_id, name, arguments)
        )


def _tool_call_fields(data: dict) -> tuple:
    """``{id, name, arguments}``, or an OpenAI tool call ``{id, type, function: {...}}``."""
    function = data.get("function")
    if isinstance(function, dict):
        return data.get("id"), function.get("name"), function.get("arguments", {})
    return data.get("id"), data.get("name"), data.get("arguments", {})
