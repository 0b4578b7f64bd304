"""Memories and file memories in the panel: the list, the memory itself (If-Match), files
with their ETags (an edit conflict overwrites nothing), history with diffs, restore, purge."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from filememory.models import File, Revision
from filememory.services import files
from filememory.services.writes import Actor
from memoryhub.models import Memory, MemoryProvider
from memoryhub.principals import Principal
from panel.diffs import line_diff
from tests.factories import create_memory, update_memory
from tests.panel.conftest import logged_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def memory(tenant) -> Memory:
    return create_memory(
        tenant.owner, {"name": "Team conventions", "type": "postgres", "labels": ["team"]}
    )


def put(tenant, memory: Memory, path: str, content: str, etag: str | None = None):
    """A change by an API key, as an agent runtime makes it."""
    headers = {"HTTP_IF_MATCH": etag} if etag else {}
    response = tenant.api("write").put(
        f"/api/v1/memories/{memory.id}/files/{path}", {"content": content}, **headers
    )
    assert response.status_code in (200, 201), response.content
    return response


@pytest.fixture
def notes(tenant, memory) -> File:
    """notes/style.md at version 2, and a second file."""
    first = put(tenant, memory, "notes/style.md", "Use tabs.\nWrap at 80.\n")
    put(tenant, memory, "notes/style.md", "Use spaces.\nWrap at 80.\n", first["ETag"])
    put(tenant, memory, "readme.md", "# Team\n")
    return File.objects.get(memory=memory, path="notes/style.md")


def url(tenant, rest: str = "") -> str:
    return f"/panel/w/{tenant.workspace.id}/memories/{rest}"


def mem_url(tenant, memory: Memory, rest: str = "", path: str | None = None) -> str:
    query = f"?path={quote(path)}" if path is not None else ""
    return url(tenant, f"{memory.id}/{rest}") + query


def etag_of(response) -> str:
    """The ETag a page's form carries (its hidden field)."""
    return response.context["form"]["etag"]


# --- the list of memories ---------------------------------------------------------------


@pytest.fixture
def record_memory(tenant) -> Memory:
    provider = MemoryProvider.objects.create(
        workspace=tenant.workspace, type="mem0_oss", name="Local mem0", config={}
    )
    return Memory.objects.create(
        workspace=tenant.workspace,
        kind="record",
        type="mem0_oss",
        name="User facts",
        provider=provider,
        namespace="ns-1",
    )


def test_the_list_shows_each_memory_with_its_kind_labels_and_a_link(
    viewer, tenant, memory, notes, record_memory
):
    response = logged_in(viewer).get(url(tenant))
    body = response.content.decode()
    assert response.status_code == 200
    assert 'aria-current="page">Memories</a>' in body
    assert "Team conventions" in body and '<span class="tag">team</span>' in body
    assert f'href="{mem_url(tenant, memory, "files/")}">2 files →</a>' in body
    assert f'href="/panel/w/{tenant.workspace.id}/memories/{record_memory.id}/records/"' in body
    assert "New file memory" not in body  # a viewer is offered no create


def test_the_list_filters_by_kind_and_label(viewer, tenant, memory, record_memory):
    client = logged_in(viewer)
    files_only = client.get(url(tenant), {"kind": "file", "label": ""}).content.decode()
    assert "Team conventions" in files_only and "User facts" not in files_only
    none = client.get(url(tenant), {"label": "nope"}).content.decode()
    assert "No memory matches." in none
    bad = client.get(url(tenant), {"kind": "fact"})
    assert bad.status_code == 422 and "kind must be one of: file, record" in bad.content.decode()


def test_an_empty_workspace_says_so(editor, tenant):
    body = logged_in(editor).get(url(tenant)).content.decode()
    assert "No memories yet." in body and "New file memory" in body


def test_the_list_runs_no_query_per_memory(viewer, tenant, django_assert_max_num_queries):
    for n in range(60):
        create_memory(tenant.owner, {"name": f"memory {n}", "labels": [f"l{n}"]})
    client = logged_in(viewer)
    with django_assert_max_num_queries(8):
        response = client.get(url(tenant), {"page": 1})
    assert response.status_code == 200
    assert "Page 1 of 2 (60 memories)" in response.content.decode()
    assert len(response.context["rows"]) == 50


def test_another_workspaces_memories_are_404(outsider, tenant, memory, notes):
    client = logged_in(outsider)
    for page in (
        url(tenant),
        url(tenant, "new/"),
        mem_url(tenant, memory),
        mem_url(tenant, memory, "edit/"),
        mem_url(tenant, memory, "delete/"),
        mem_url(tenant, memory, "files/"),
        mem_url(tenant, memory, "file/", "notes/style.md"),
        mem_url(tenant, memory, "file/edit/", "notes/style.md"),
        mem_url(tenant, memory, "history/"),
    ):
        assert client.get(page).status_code == 404, page
        assert client.post(page).status_code == 404, page


def test_a_memory_of_another_workspace_is_404_to_its_url(outsider, other_tenant, memory):
    """The memory's id under the outsider's own workspace: not theirs, so 404."""
    client = logged_in(outsider)
    assert client.get(mem_url(other_tenant, memory)).status_code == 404
    assert client.get(mem_url(other_tenant, memory, "files/")).status_code == 404


# --- the memory itself -------------------------------------------------------------------


def test_a_memory_page_shows_its_settings(viewer, tenant, memory, notes):
    body = logged_in(viewer).get(mem_url(tenant, memory)).content.decode()
    assert "Team conventions" in body and "Inherited:" in body
    assert "2 files" in body and "Edit this memory" not in body and "Purge all history" not in body


def test_an_editor_creates_a_file_memory(editor, tenant):
    client = logged_in(editor)
    assert client.get(url(tenant, "new/")).status_code == 200
    form = {
        "name": "Runbooks",
        "description": "How we operate",
        "labels": "ops\r\nteam\r\n\r\nops",
        "guide": "Keep one runbook a file.",
        "always_load": "index.md\r\n",
    }
    done = client.post(url(tenant, "new/"), form, follow=True)
    assert "Created the file memory Runbooks." in done.content.decode()
    created = Memory.objects.get(name="Runbooks")
    assert (created.kind, created.labels, created.always_load) == (
        "file",
        ["ops", "team"],
        ["index.md"],
    )
    assert created.guide == "Keep one runbook a file."
    event = tenant.workspace.audit_events.get(action="memory.create")
    assert event.principal_id == "user:ed"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("name", "  ", "name is 1-200 characters"),
        ("always_load", "../secret", "always_load[0] may not contain"),
        ("always_load", "a.md\na.md", "always_load names each path once"),
        ("labels", "x" * 65, "labels[0] is at most 64 characters"),
    ],
)
def test_a_bad_memory_form_changes_nothing(editor, tenant, field, value, message):
    form = {"name": "Runbooks", "labels": "", "guide": "", "always_load": "", field: value}
    response = logged_in(editor).post(url(tenant, "new/"), form)
    assert response.status_code == 422 and message in response.content.decode()
    assert not Memory.objects.filter(name="Runbooks").exists()


def test_an_editor_edits_a_memory_with_its_etag(editor, tenant, memory):
    client = logged_in(editor)
    page = client.get(mem_url(tenant, memory, "edit/"))
    assert page.status_code == 200 and 'name="etag" value="&quot;1&quot;"' in page.content.decode()
    form = {
        "etag": etag_of(page),
        "name": "Conventions",
        "description": "",
        "labels": "team\ncode",
        "guide": "Only conventions.",
        "always_load": "notes/style.md",
    }
    done = client.post(mem_url(tenant, memory, "edit/"), form, follow=True)
    assert "Saved Conventions." in done.content.decode()
    memory.refresh_from_db()
    assert (memory.name, memory.labels, memory.guide) == (
        "Conventions",
        ["team", "code"],
        "Only conventions.",
    )
    assert memory.always_load == ["notes/style.md"] and memory.version == 2
    # Back to the inherited guide.
    form.update(etag='"2"', inherit_guide="1")
    client.post(mem_url(tenant, memory, "edit/"), form)
    memory.refresh_from_db()
    assert memory.guide is None


def test_a_stale_memory_edit_says_so_and_changes_nothing(editor, tenant, memory):
    client = logged_in(editor)
    page = client.get(mem_url(tenant, memory, "edit/"))
    update_memory(tenant.owner, memory.id, {"name": "Renamed by the API"}, '"1"')
    form = {"etag": etag_of(page), "name": "Mine", "labels": "", "guide": "", "always_load": ""}
    response = client.post(mem_url(tenant, memory, "edit/"), form)
    body = response.content.decode()
    assert response.status_code == 412
    assert 'role="alert"' in body and "someone changed this memory since you opened" in body
    assert "Renamed by the API" in body  # what the other change did
    assert 'value="Mine"' in body  # the user's values stay in the form
    memory.refresh_from_db()
    assert (memory.name, memory.version) == ("Renamed by the API", 2)
    assert response.context["form"]["etag"] == '"2"'  # saving again is deliberate


def test_a_viewer_may_not_create_edit_or_delete_a_memory(viewer, tenant, memory):
    client = logged_in(viewer)
    for page in (
        url(tenant, "new/"),
        mem_url(tenant, memory, "edit/"),
        mem_url(tenant, memory, "delete/"),
    ):
        assert client.get(page).status_code == 403, page
        assert client.post(page, {"name": "x", "etag": '"1"'}).status_code == 403, page
    assert Memory.objects.filter(pk=memory.pk, name="Team conventions", version=1).exists()


def test_deleting_a_memory_says_what_goes_and_needs_its_etag(panel_admin, tenant, memory, notes):
    client = logged_in(panel_admin)
    confirm = client.get(mem_url(tenant, memory, "delete/"))
    body = confirm.content.decode()
    assert "<strong>2</strong> files" in body and "all their history" in body
    update_memory(tenant.owner, memory.id, {"labels": ["changed"]}, '"1"')
    stale = client.post(mem_url(tenant, memory, "delete/"), {"etag": '"1"'})
    assert (
        stale.status_code == 412
        and "Not deleted: someone changed this memory" in stale.content.decode()
    )
    assert Memory.objects.filter(pk=memory.pk).exists()
    done = client.post(mem_url(tenant, memory, "delete/"), {"etag": '"2"'}, follow=True)
    assert "Deleted the memory Team conventions." in done.content.decode()
    assert not Memory.objects.filter(pk=memory.pk).exists()
    assert not File.objects.filter(memory_id=memory.pk).exists()
    assert tenant.workspace.audit_events.get(action="memory.delete").principal_id == "user:ada"


# --- files ------------------------------------------------------------------------------


def test_the_tree_shows_folders_files_sizes_and_versions(viewer, tenant, memory, notes):
    response = logged_in(viewer).get(mem_url(tenant, memory, "files/"))
    body = response.content.decode()
    assert 'href="?prefix=notes/">notes <span class="count">1</span>' in body
    assert 'href="?prefix=">/ <span class="count">2</span>' in body
    assert "notes/style.md</a>" in body and "<td>2</td>" in body  # version 2
    only = logged_in(viewer).get(mem_url(tenant, memory, "files/"), {"prefix": "notes/"})
    assert "readme.md" not in only.content.decode()
    bad = logged_in(viewer).get(mem_url(tenant, memory, "files/"), {"prefix": "../x"})
    assert bad.status_code == 422 and "may not contain" in bad.content.decode()


def test_the_tree_runs_no_query_per_file(viewer, tenant, memory, django_assert_max_num_queries):
    for n in range(120):
        put(tenant, memory, f"bulk/{n % 7}/file{n}.md", f"file {n}")
    client = logged_in(viewer)
    with django_assert_max_num_queries(9):
        response = client.get(mem_url(tenant, memory, "files/"))
    assert response.status_code == 200
    assert "Page 1 of 2 (120 files)" in response.content.decode()


def test_an_empty_file_memory_says_so(viewer, tenant, memory):
    body = logged_in(viewer).get(mem_url(tenant, memory, "files/")).content.decode()
    assert "No files yet." in body


def test_a_file_page_shows_its_content(viewer, tenant, memory, notes):
    response = logged_in(viewer).get(mem_url(tenant, memory, "file/", "notes/style.md"))
    body = response.content.decode()
    assert response.status_code == 200
    assert "Use spaces.\nWrap at 80.\n</pre>" in body
    assert "Edit this file" not in body  # a viewer edits nothing
    assert logged_in(viewer).get(mem_url(tenant, memory, "file/", "nope.md")).status_code == 404


def test_a_bad_path_is_a_clear_message(editor, tenant, memory, notes):
    client = logged_in(editor)
    for path, message in (
        ("../etc/passwd", "may not contain &#x27;.&#x27; or &#x27;..&#x27; segments"),
        ("/abs.md", "must be relative"),
        ("", "path must not be empty"),
    ):
        for page in ("file/", "file/edit/", "file/delete/", "history/"):
            response = client.get(mem_url(tenant, memory, page, path))
            assert response.status_code == 422, (page, path)
            assert message in response.content.decode(), (page, path)


def test_a_script_in_a_file_is_shown_as_text(viewer, editor, tenant, memory):
    put(tenant, memory, "evil.md", "<script>alert('x')</script>")
    put(tenant, memory, "<b>odd</b>.md", "fine")
    pages = [
        mem_url(tenant, memory, "files/"),
        mem_url(tenant, memory, "file/", "evil.md"),
        mem_url(tenant, memory, "history/", "evil.md"),
        mem_url(tenant, memory, "history/"),
    ]
    for page in pages:
        body = logged_in(viewer).get(page).content.decode()
        assert "<script>alert" not in body and "<b>odd" not in body, page
    shown = logged_in(viewer).get(pages[1]).content.decode()
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in shown
    edit = logged_in(editor).get(mem_url(tenant, memory, "file/edit/", "evil.md")).content.decode()
    assert "<script>alert" not in edit and "&lt;script&gt;" in edit


def test_an_editor_edits_a_file_with_its_etag(editor, tenant, memory, notes):
    client = logged_in(editor)
    page = client.get(mem_url(tenant, memory, "file/edit/", "notes/style.md"))
    body = page.content.decode()
    assert '<label for="id_content">Content</label>' in body
    assert "Use spaces.\nWrap at 80.\n</textarea>" in body
    done = client.post(
        mem_url(tenant, memory, "file/edit/", "notes/style.md"),
        {"etag": etag_of(page), "content": "Use spaces.\r\nWrap at 100.\r\n"},
        follow=True,
    )
    assert "Saved notes/style.md: version 3." in done.content.decode()
    notes.refresh_from_db()
    assert (notes.content, notes.version, notes.principal_id) == (
        "Use spaces.\nWrap at 100.\n",
        3,
        "user:ed",
    )
    revision = Revision.objects.filter(path="notes/style.md").latest("id")
    assert (revision.principal_type, revision.principal_id) == ("staff", "user:ed")
    event = tenant.workspace.audit_events.get(action="file.update", principal_id="user:ed")
    assert event.object_id == f"{memory.id}:notes/style.md" and event.details["version"] == 3
    # The API shows the person's change.
    api = tenant.api("read").get(f"/api/v1/memories/{memory.id}/revisions").json()["results"][0]
    assert (api["principal_type"], api["principal_id"]) == ("staff", "user:ed")


def test_two_edits_from_one_version_the_second_sees_the_first_and_overwrites_nothing(
    editor, panel_admin, tenant, memory, notes
):
    edit = mem_url(tenant, memory, "file/edit/", "notes/style.md")
    ed, ada = logged_in(editor), logged_in(panel_admin)
    started = etag_of(ed.get(edit))
    assert etag_of(ada.get(edit)) == started
    first = ed.post(edit, {"etag": started, "content": "Use spaces.\nWrap at 100.\n"})
    assert first.status_code == 302
    second = ada.post(edit, {"etag": started, "content": "Use tabs, always.\nWrap at 80.\n"})
    body = second.content.decode()
    assert second.status_code == 412
    assert '<div class="conflict" role="alert">' in body
    assert "Not saved: notes/style.md changed since you opened it." in body
    assert 'now at version 3, changed by <span class="mono">user:ed</span>' in body
    # The other change: from the version ada started from (2) to the current one (3).
    other = [(line.kind, line.text) for line in second.context["other_change"]]
    assert ("removed", "Wrap at 80.") in other and ("added", "Wrap at 100.") in other
    assert "<del>Wrap at 80.</del>" in body and "<ins>Wrap at 100.</ins>" in body
    # Her text stays in the form, which now carries the current ETag.
    assert "Use tabs, always.\nWrap at 80.\n</textarea>" in body
    notes.refresh_from_db()
    assert (notes.content, notes.version) == ("Use spaces.\nWrap at 100.\n", 3)
    assert etag_of(second) != started
    # Saving again, having seen it, replaces version 3.
    again = ada.post(edit, {"etag": etag_of(second), "content": "Merged.\n"})
    assert again.status_code == 302
    notes.refresh_from_db()
    assert (notes.content, notes.version, notes.principal_id) == ("Merged.\n", 4, "user:ada")


def test_an_edit_of_a_file_deleted_meanwhile_is_a_conflict(editor, tenant, memory, notes):
    client = logged_in(editor)
    edit = mem_url(tenant, memory, "file/edit/", "readme.md")
    started = etag_of(client.get(edit))
    tenant.api("write").delete(f"/api/v1/memories/{memory.id}/files/readme.md", HTTP_IF_MATCH="*")
    response = client.post(edit, {"etag": started, "content": "# Mine\n"})
    body = response.content.decode()
    assert response.status_code == 412 and "It has been deleted." in body
    assert "# Mine\n</textarea>" in body and response.context["form"]["etag"] == ""
    assert not File.objects.filter(memory=memory, path="readme.md").exists()
    # Saving again, having seen that, creates it anew.
    assert client.post(edit, {"etag": "", "content": "# Mine\n"}).status_code == 302
    assert File.objects.get(memory=memory, path="readme.md").content == "# Mine\n"


def test_a_conflict_after_history_was_purged_still_shows_the_current_file(
    editor, tenant, memory, notes
):
    client = logged_in(editor)
    edit = mem_url(tenant, memory, "file/edit/", "notes/style.md")
    started = etag_of(client.get(edit))
    put(tenant, memory, "notes/style.md", "Theirs.\n", started)
    Revision.objects.filter(memory=memory).delete()  # as if purged: no version to compare
    body = client.post(edit, {"etag": started, "content": "Mine.\n"}).content.decode()
    assert "no longer in the history" in body and "Theirs.\n</pre>" in body
    assert "<del>Theirs.</del>" in body and "<ins>Mine.</ins>" in body
    assert File.objects.get(memory=memory, path="notes/style.md").content == "Theirs.\n"


def test_a_file_starting_with_a_blank_line_keeps_it_in_the_form(editor, tenant, memory):
    put(tenant, memory, "lead.md", "\nafter a blank line")
    body = logged_in(editor).get(mem_url(tenant, memory, "file/edit/", "lead.md")).content.decode()
    # A textarea drops one newline after its start tag: the form adds one of its own.
    assert 'spellcheck="false">\n\nafter a blank line</textarea>' in body


def test_a_line_diff_shows_changes_with_context_and_gaps():
    before = "\n".join(f"line {n}" for n in range(1, 21))
    after = before.replace("line 2\n", "line two\n").replace("line 18", "line eighteen")
    kinds = [(line.kind, line.old, line.new) for line in line_diff(before, after, context=1)]
    assert kinds == [
        ("same", 1, 1),
        ("removed", 2, None),
        ("added", None, 2),
        ("same", 3, 3),
        ("gap", None, None),
        ("same", 17, 17),
        ("removed", 18, None),
        ("added", None, 18),
        ("same", 19, 19),
        ("gap", None, None),
    ]
    assert line_diff("same\n", "same\n") == []


def test_a_too_large_file_is_refused_and_changes_nothing(editor, tenant, memory, notes, settings):
    settings.MEMORYHUB_SETTINGS = {**settings.MEMORYHUB_SETTINGS, "memory.max_file_bytes": 10}
    client = logged_in(editor)
    edit = mem_url(tenant, memory, "file/edit/", "notes/style.md")
    response = client.post(edit, {"etag": etag_of(client.get(edit)), "content": "x" * 11})
    assert response.status_code == 422
    assert "a file holds at most 10 bytes" in response.content.decode()
    notes.refresh_from_db()
    assert notes.version == 2


def test_a_viewer_may_not_change_files(viewer, tenant, memory, notes):
    client = logged_in(viewer)
    revision = Revision.objects.filter(path="notes/style.md").earliest("id")
    for page in (
        mem_url(tenant, memory, "file/edit/", "notes/style.md"),
        mem_url(tenant, memory, "file/delete/", "notes/style.md"),
        mem_url(tenant, memory, "files/new/"),
        mem_url(tenant, memory, f"revisions/{revision.public_id}/restore/"),
    ):
        assert client.get(page).status_code == 403, page
        assert client.post(page, {"etag": "*", "content": "x", "path": "x.md"}).status_code == 403
    notes.refresh_from_db()
    assert notes.version == 2 and not File.objects.filter(path="x.md").exists()


def test_an_editor_creates_a_file(editor, tenant, memory, notes):
    client = logged_in(editor)
    new = mem_url(tenant, memory, "files/new/")
    assert 'value="notes/"' in client.get(new, {"prefix": "notes/"}).content.decode()
    done = client.post(new, {"path": "notes/new.md", "content": "Hello\r\n"}, follow=True)
    assert "Created notes/new.md." in done.content.decode()
    assert File.objects.get(memory=memory, path="notes/new.md").content == "Hello\n"
    # A path that is taken, or bad, changes nothing and says why.
    taken = client.post(new, {"path": "readme.md", "content": "other"})
    assert (
        taken.status_code == 412
        and "readme.md already exists (version 1)" in taken.content.decode()
    )
    assert File.objects.get(memory=memory, path="readme.md").content == "# Team\n"
    bad = client.post(new, {"path": "a//b.md", "content": "x"})
    assert bad.status_code == 422 and "may not contain empty segments" in bad.content.decode()
    assert 'value="a//b.md"' in bad.content.decode()  # what was typed stays
    assert File.objects.filter(memory=memory).count() == 3


def test_deleting_a_file_needs_a_confirmation_and_its_etag(editor, tenant, memory, notes):
    client = logged_in(editor)
    page = mem_url(tenant, memory, "file/delete/", "notes/style.md")
    confirm = client.get(page)
    assert 'Delete <span class="mono">notes/style.md</span>?' in confirm.content.decode()
    started = confirm.context["etag"]
    put(tenant, memory, "notes/style.md", "Changed by the API.\n", started)
    stale = client.post(page, {"etag": started})
    assert (
        stale.status_code == 412 and "Not deleted: notes/style.md changed" in stale.content.decode()
    )
    assert File.objects.filter(memory=memory, path="notes/style.md").exists()
    done = client.post(page, {"etag": stale.context["etag"]}, follow=True)
    assert "Deleted notes/style.md; its history stays until purged." in done.content.decode()
    assert not File.objects.filter(memory=memory, path="notes/style.md").exists()
    assert tenant.workspace.audit_events.get(action="file.delete").principal_id == "user:ed"


# --- history, restore, purge -------------------------------------------------------------


def test_a_files_history_shows_every_revision_with_its_diff(viewer, tenant, memory, notes):
    response = logged_in(viewer).get(mem_url(tenant, memory, "history/", "notes/style.md"))
    body = response.content.decode()
    assert response.status_code == 200
    assert "<strong>update</strong> → version 2" in body and "<strong>create</strong>" in body
    assert "<del>Use tabs.</del>" in body and "<ins>Use spaces.</ins>" in body
    assert "Created with:" in body
    assert "by api_key" in body
    assert "Restore this version" not in body  # a viewer restores nothing


def test_a_revision_from_a_run_names_the_run(viewer, tenant, memory, running_run):
    run, _ = running_run
    agent = Actor(Principal.for_run(run), run_id=run.id, tool_call_id="call_1")
    files.put_file(agent, memory.id, path="a.md", content="x", if_match=None)
    body = logged_in(viewer).get(mem_url(tenant, memory, "history/", "a.md")).content.decode()
    run_page = f"/panel/w/{tenant.workspace.id}/runs/{run.id}/"
    assert f'by run <a class="mono" href="{run_page}">{run.id}</a>' in body  # named once
    assert "in run" not in body


def test_the_memorys_history_lists_every_path(viewer, tenant, memory, notes):
    body = logged_in(viewer).get(mem_url(tenant, memory, "history/")).content.decode()
    assert "readme.md</a>" in body and "notes/style.md</a>" in body
    assert "(3 revisions)" in body


def test_the_history_runs_no_query_per_revision(
    viewer, tenant, memory, django_assert_max_num_queries, settings
):
    settings.MEMORYHUB_SETTINGS = {**settings.MEMORYHUB_SETTINGS, "memory.revisions_per_file": 100}
    etag = put(tenant, memory, "log.md", "line 0\n")["ETag"]
    for n in range(1, 30):
        etag = put(tenant, memory, "log.md", f"line {n}\n", etag)["ETag"]
    client = logged_in(viewer)
    for path in ("log.md", None):
        with django_assert_max_num_queries(10):
            response = client.get(mem_url(tenant, memory, "history/", path))
        assert response.status_code == 200
        assert "(30 revisions)" in response.content.decode()


def test_a_revision_page_shows_its_content_and_diff(viewer, tenant, memory, notes):
    revision = Revision.objects.filter(path="notes/style.md").latest("id")
    response = logged_in(viewer).get(mem_url(tenant, memory, f"revisions/{revision.public_id}/"))
    body = response.content.decode()
    assert "<del>Use tabs.</del>" in body and "Use spaces.\nWrap at 80.\n</pre>" in body
    other = Revision.objects.filter(path="readme.md").get()
    assert logged_in(viewer).get(mem_url(tenant, memory, "revisions/rev_nope/")).status_code == 404
    assert (
        other.public_id
        in logged_in(viewer)
        .get(mem_url(tenant, memory, f"revisions/{other.public_id}/"))
        .content.decode()
    )


def test_an_editor_restores_a_revision_after_confirming(editor, tenant, memory, notes):
    client = logged_in(editor)
    first = Revision.objects.filter(path="notes/style.md").earliest("id")
    history = client.get(mem_url(tenant, memory, "history/", "notes/style.md")).content.decode()
    revision_url = mem_url(tenant, memory, f"revisions/{first.public_id}/")
    restore = revision_url + "restore/"
    assert f'href="{restore}">Restore this version…</a>' in history
    confirm = client.get(restore)
    body = confirm.content.decode()
    assert "replacing version 2" in body
    assert "<del>Use spaces.</del>" in body and "<ins>Use tabs.</ins>" in body
    notes.refresh_from_db()
    assert notes.version == 2  # nothing happened yet
    done = client.post(restore, {"etag": confirm.context["etag"]}, follow=True)
    text = done.content.decode()
    assert f"Restored notes/style.md from {first.public_id}: version 3." in text
    assert "<strong>restore</strong> → version 3" in text
    assert f'restored from <a class="mono" href="{revision_url}">{first.public_id}</a>' in text
    notes.refresh_from_db()
    assert (notes.content, notes.version) == ("Use tabs.\nWrap at 80.\n", 3)
    event = tenant.workspace.audit_events.get(action="file.restore")
    assert event.principal_id == "user:ed" and event.details["revision"] == first.public_id


def test_a_restore_over_a_newer_version_is_refused(editor, tenant, memory, notes):
    client = logged_in(editor)
    first = Revision.objects.filter(path="notes/style.md").earliest("id")
    restore = mem_url(tenant, memory, f"revisions/{first.public_id}/restore/")
    started = client.get(restore).context["etag"]
    put(tenant, memory, "notes/style.md", "Newer.\n", started)
    response = client.post(restore, {"etag": started})
    assert response.status_code == 412
    assert (
        "Not restored: notes/style.md changed since you opened this page"
        in response.content.decode()
    )
    assert File.objects.get(memory=memory, path="notes/style.md").content == "Newer.\n"


def test_a_deleted_file_is_restored_from_its_history(editor, tenant, memory, notes):
    client = logged_in(editor)
    tenant.api("write").delete(f"/api/v1/memories/{memory.id}/files/readme.md", HTTP_IF_MATCH="*")
    history = client.get(mem_url(tenant, memory, "history/", "readme.md")).content.decode()
    assert "No file is at this path now" in history and "Deleted the file." in history
    created = Revision.objects.get(path="readme.md", action="create")
    restore = mem_url(tenant, memory, f"revisions/{created.public_id}/restore/")
    assert "restoring creates it again" in client.get(restore).content.decode()
    client.post(restore, {"etag": ""})
    assert File.objects.get(memory=memory, path="readme.md").content == "# Team\n"
    deleted = Revision.objects.get(path="readme.md", action="delete")
    refused = client.post(mem_url(tenant, memory, f"revisions/{deleted.public_id}/restore/"))
    assert refused.status_code == 422 and "no content to restore" in refused.content.decode()


@pytest.mark.parametrize("persona", ["viewer", "editor"])
def test_only_an_admin_purges_history(request, persona, tenant, memory, notes):
    client = logged_in(request.getfixturevalue(persona))
    for page in (
        mem_url(tenant, memory, "history/purge/"),
        mem_url(tenant, memory, "history/purge/", "readme.md"),
    ):
        assert client.get(page).status_code == 403
        assert client.post(page).status_code == 403
    assert Revision.objects.filter(memory=memory).count() == 3
    assert (
        "Purge this history" not in client.get(mem_url(tenant, memory, "history/")).content.decode()
    )


def test_an_admin_purges_a_files_history_after_seeing_what_goes(panel_admin, tenant, memory, notes):
    client = logged_in(panel_admin)
    page = mem_url(tenant, memory, "history/purge/", "notes/style.md")
    confirm = client.get(page).content.decode()
    assert "<strong>2</strong> revisions" in confirm and "The files themselves stay" in confirm
    assert Revision.objects.filter(memory=memory).count() == 3  # nothing went yet
    done = client.post(page, follow=True)
    assert "Purged 2 revisions of notes/style.md." in done.content.decode()
    assert not Revision.objects.filter(memory=memory, path="notes/style.md").exists()
    assert Revision.objects.filter(memory=memory, path="readme.md").count() == 1
    assert File.objects.get(memory=memory, path="notes/style.md").version == 2  # the file stays
    event = tenant.workspace.audit_events.get(action="history.purge")
    assert event.principal_id == "user:ada" and event.details["revisions"] == 2
    memory.refresh_from_db()
    assert memory.history_bytes == Revision.objects.get(memory=memory).size


def test_an_admin_purges_the_whole_memorys_history(panel_admin, tenant, memory, notes):
    client = logged_in(panel_admin)
    page = mem_url(tenant, memory, "history/purge/")
    assert "<strong>3</strong> revisions" in client.get(page).content.decode()
    done = client.post(page, follow=True)
    assert "Purged 3 revisions of the memory Team conventions." in done.content.decode()
    assert "No history" in done.content.decode()
    assert not Revision.objects.filter(memory=memory).exists()
    bad = client.get(mem_url(tenant, memory, "history/purge/", "a\\b"))
    assert bad.status_code == 422 and "backslashes" in bad.content.decode()


def test_a_record_memorys_files_are_404(viewer, tenant, record_memory):
    client = logged_in(viewer)
    assert client.get(mem_url(tenant, record_memory, "files/")).status_code == 404
    assert client.get(mem_url(tenant, record_memory, "history/")).status_code == 404
    body = client.get(mem_url(tenant, record_memory)).content.decode()
    assert "/records/" in body and "Always loaded" not in body
