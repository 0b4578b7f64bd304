"""A file memory's files in the panel: the tree, a file, editing with its ETag (a conflict
shows the other change and overwrites nothing), creating and deleting files, the history
with diffs, restoring a revision and purging history. Every change is filememory's own
service with the API's If-Match rule; the file's path travels as ``?path=``."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from filememory.filters import FileFilter, RevisionFilter
from filememory.models import File, Revision
from filememory.representations import file_etag
from filememory.serializers import FileHistoryPurgeQuerySerializer, MemoryFileWriteSerializer
from filememory.services import files, revisions
from filememory.services.paths import FILE_PATH
from filememory.services.writes import Actor
from memoryhub.errors import ApiError
from memoryhub.models import Memory, Permission
from memoryhub.rules import parse
from panel.diffs import Budget, line_diff
from panel.models import Role
from panel.services import files as shown
from panel.services.access import Seat, seat
from panel.views.base import panel_page, refused

FILES_PER_PAGE = 100
HISTORY_PER_PAGE = 20
TEMPLATES = "panel/files/"


def _memory(request: HttpRequest, workspace_id: str, memory_id: str) -> tuple[Seat, Memory]:
    here = seat(request.user, workspace_id)
    return here, files.get_file_memory(here.principal, memory_id)


def _current(here: Seat, memory: Memory, path: str) -> File | None:
    try:
        return files.get_file(here.principal, memory.id, path)
    except ApiError as error:
        if error.status == 404:
            return None
        raise


def _text(raw: str) -> str:
    return raw.replace("\r\n", "\n")  # a browser sends a textarea's lines with CRLF


def _to(name: str, here: Seat, memory: Memory, path: str | None = None) -> HttpResponse:
    """A redirect to one of this memory's pages (a file's with its path)."""
    url = reverse(f"panel:{name}", args=[here.workspace.id, memory.id])
    return redirect(url if path is None else f"{url}?{urlencode({'path': path})}")


@panel_page
def file_list(request: HttpRequest, workspace_id: str, memory_id: str) -> HttpResponse:
    """The folders with their counts, and the files of one folder (``?prefix=``)."""
    here, memory = _memory(request, workspace_id, memory_id)
    context = {"seat": here, "memory": memory, "prefix": request.GET.get("prefix", "")}
    context["tree"], context["tree_cut"] = shown.folder_tree(memory)
    try:
        found = FileFilter(request.GET, queryset=files.list_files(here.principal, memory_id))
        context["page"] = Paginator(found.qs, FILES_PER_PAGE).get_page(request.GET.get("page"))
    except ApiError as error:  # the prefix's rule refused it
        return refused(request, error, context, TEMPLATES + "list.html")
    return render(request, TEMPLATES + "list.html", context)


def _path(request: HttpRequest) -> str:
    """The checked ``?path=``; a bad one is the API's own 422 (the page shows it)."""
    return FILE_PATH(request.GET.get("path", ""))


@panel_page
def file_detail(request: HttpRequest, workspace_id: str, memory_id: str) -> HttpResponse:
    here, memory = _memory(request, workspace_id, memory_id)
    try:
        file = files.get_file(here.principal, memory_id, _path(request))
    except ApiError as error:
        return refused(request, error, {"seat": here})
    context = {"seat": here, "memory": memory, "file": file, "etag": file_etag(file)}
    return render(request, TEMPLATES + "detail.html", context)


def _save(here: Seat, memory: Memory, path: str, content: str, etag: str) -> File:
    """PUT …/files/{path}: the API's parse and service; an empty ETag creates only."""
    data = parse(MemoryFileWriteSerializer, {"content": content})
    file, _ = files.put_file(
        Actor(here.principal), memory.id, path=path, content=data["content"], if_match=etag or None
    )
    return file


@panel_page
def file_edit(request: HttpRequest, workspace_id: str, memory_id: str) -> HttpResponse:
    """The form carries the ETag it was read with; saving is If-Match that ETag."""
    here, memory = _memory(request, workspace_id, memory_id)
    here.principal.require(Permission.RUN)  # the API's own check: editing files needs run
    context = {"seat": here, "memory": memory}
    try:
        context["path"] = path = _path(request)
        # A save may find the file deleted meanwhile: that is a conflict, not a 404.
        file = files.get_file(here.principal, memory_id, path) if request.method != "POST" else None
    except ApiError as error:
        return refused(request, error, context)
    if file is not None:
        context.update(file=file, form={"content": file.content, "etag": file_etag(file)})
        return render(request, TEMPLATES + "edit.html", context)
    content, etag = _text(request.POST.get("content", "")), request.POST.get("etag", "")
    try:
        file = _save(here, memory, path, content, etag)
    except ApiError as error:
        context["form"] = {"content": content, "etag": etag}
        if error.status == 412:
            context.update(_conflict(here, memory, path, etag, content))
        else:
            context["file"] = _current(here, memory, path)
        return refused(request, error, context, TEMPLATES + "edit.html")
    messages.success(request, f"Saved {path}: version {file.version}.")
    return _to("file", here, memory, path)


def _conflict(here: Seat, memory: Memory, path: str, etag: str, mine: str) -> dict:
    """What the page shows when another change came first: the current file, the other
    change (from the version this edit started from), and this edit against the current;
    the form now carries the current ETag, so saving again is a deliberate choice."""
    current = _current(here, memory, path)
    base = shown.started_from(memory, path, etag, current)
    budget = Budget()  # the page's two diffs share one
    return {
        "conflict": True,
        "file": current,
        "base_kept": base is not None,
        "other_change": (
            line_diff(base, current.content, budget=budget) if base is not None and current else []
        ),
        "mine_against_current": line_diff(current.content, mine, budget=budget) if current else [],
        "form": {"content": mine, "etag": file_etag(current) if current else ""},
    }


@panel_page
def file_new(request: HttpRequest, workspace_id: str, memory_id: str) -> HttpResponse:
    """A new file: it must not exist yet (the API's PUT without If-Match)."""
    here, memory = _memory(request, workspace_id, memory_id)
    here.principal.require(Permission.RUN)
    context = {"seat": here, "memory": memory, "form": {"path": request.GET.get("prefix", "")}}
    if request.method != "POST":
        return render(request, TEMPLATES + "new.html", context)
    raw_path, content = request.POST.get("path", ""), _text(request.POST.get("content", ""))
    context["form"] = {"path": raw_path, "content": content}
    try:
        path = FILE_PATH(raw_path)
        file = _save(here, memory, path, content, "")
    except ApiError as error:
        if error.status == 412:  # a file is there already: link it
            context["existing"] = raw_path
        return refused(request, error, context, TEMPLATES + "new.html")
    messages.success(request, f"Created {path}.")
    return _to("file", here, memory, file.path)


@panel_page
def file_delete(request: HttpRequest, workspace_id: str, memory_id: str) -> HttpResponse:
    """A confirmation page; the POST deletes If-Match the version it showed."""
    here, memory = _memory(request, workspace_id, memory_id)
    here.principal.require(Permission.RUN)
    context = {"seat": here, "memory": memory}
    try:
        path = _path(request)
        file = files.get_file(here.principal, memory_id, path)
    except ApiError as error:
        return refused(request, error, context)
    context.update(file=file, etag=file_etag(file))
    if request.method != "POST":
        return render(request, TEMPLATES + "delete.html", context)
    try:
        files.delete_file(
            Actor(here.principal), memory_id, path=path, if_match=request.POST.get("etag", "")
        )
    except ApiError as error:  # the page shows the file as it is now, to confirm again
        return refused(request, error, context, TEMPLATES + "delete.html")
    messages.success(request, f"Deleted {path}; its history stays until purged.")
    return _to("files", here, memory)


def _history_rows(page_revisions: list) -> list[dict]:
    """Each revision of one path's page with its diff to the revision before it."""
    contents = shown.contents_with_older(page_revisions)
    ids = list(contents)
    rows, budget = [], Budget()  # one budget for every revision's diff on the page
    for index, revision in enumerate(page_revisions):
        older = ids[index + 1] if index + 1 < len(ids) else None
        content = contents.get(revision.id)
        row = {"revision": revision, "content": content, "diff": None}
        if content is not None and older is not None:
            row["diff"] = line_diff(contents[older] or "", content, budget=budget)
        row["first_kept"] = older is None
        rows.append(row)
    return rows


@panel_page
def history(request: HttpRequest, workspace_id: str, memory_id: str) -> HttpResponse:
    """A file's history (``?path=``) with diffs, or the whole memory's, newest first."""
    here, memory = _memory(request, workspace_id, memory_id)
    path = request.GET.get("path")
    context = {"seat": here, "memory": memory, "path": path}
    try:
        found = RevisionFilter(
            request.GET, queryset=revisions.list_revisions(here.principal, memory_id)
        )
        page = Paginator(found.qs, HISTORY_PER_PAGE).get_page(request.GET.get("page"))
    except ApiError as error:  # the path's rule refused it
        return refused(request, error, context)
    rows = list(page.object_list)
    context.update(
        page=page,
        rows=_history_rows(rows) if path is not None else [{"revision": r} for r in rows],
        file=_current(here, memory, path) if path is not None else None,
    )
    return render(request, TEMPLATES + "history.html", context)


@panel_page
def revision_detail(
    request: HttpRequest, workspace_id: str, memory_id: str, revision_id: str
) -> HttpResponse:
    """One revision: its content, and the diff to the change of its path before it."""
    here, memory = _memory(request, workspace_id, memory_id)
    revision = revisions.get_revision(here.principal, memory_id, revision_id)
    older = shown.revision_before(revision)
    diff = None
    if revision.content is not None and older is not None:
        diff = line_diff(older.content or "", revision.content)
    context = {"seat": here, "memory": memory, "revision": revision, "older": older, "diff": diff}
    return render(request, TEMPLATES + "revision.html", context)


@panel_page
def revision_restore(
    request: HttpRequest, workspace_id: str, memory_id: str, revision_id: str
) -> HttpResponse:
    """A confirmation page showing what restoring changes; the POST restores If-Match the
    version it showed (the service's own rules: no content to restore, the size limits)."""
    here, memory = _memory(request, workspace_id, memory_id)
    here.principal.require(Permission.RUN)  # the API's own check: restoring needs run
    revision = revisions.get_revision(here.principal, memory_id, revision_id)
    context = {"seat": here, "memory": memory, "revision": revision}
    if request.method == "POST":
        try:
            file = revisions.restore_revision(
                Actor(here.principal),
                memory_id,
                revision_id,
                if_match=request.POST.get("etag") or None,
            )
        except ApiError as error:
            page = _restore_page(here, memory, revision, context)
            return refused(request, error, page, TEMPLATES + "restore.html")
        messages.success(
            request, f"Restored {file.path} from {revision_id}: version {file.version}."
        )
        return _to("history", here, memory, file.path)
    page = _restore_page(here, memory, revision, context)
    return render(request, TEMPLATES + "restore.html", page)


def _restore_page(here: Seat, memory: Memory, revision: Revision, context: dict) -> dict:
    """The file as it is now, and what restoring the revision would change in it."""
    current = _current(here, memory, revision.path)
    return {
        **context,
        "file": current,
        "etag": file_etag(current) if current else "",
        "diff": line_diff(current.content if current else "", revision.content or ""),
    }


@panel_page
def history_purge(request: HttpRequest, workspace_id: str, memory_id: str) -> HttpResponse:
    """Admins only: a page saying what goes (``?path=``: one file's history, else the whole
    memory's); the POST purges. The files themselves stay."""
    here, memory = _memory(request, workspace_id, memory_id)
    here.require(Role.ADMIN)
    context = {"seat": here, "memory": memory}
    try:
        path = parse(FileHistoryPurgeQuerySerializer, request.GET).get("path")
    except ApiError as error:
        return refused(request, error, context)
    if request.method == "POST":
        deleted = revisions.purge_history(here.principal, memory_id, path=path)
        what = path if path is not None else f"the memory {memory.name}"
        messages.success(request, f"Purged {deleted} revision{'s' * (deleted != 1)} of {what}.")
        return _to("history", here, memory, path)
    context.update(path=path, share=shown.history_of(memory, path))
    return render(request, TEMPLATES + "purge.html", context)
