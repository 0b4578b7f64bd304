from django.urls import path

from panel.views import base, facts, operations, overview, people, threads
from panel.views import files as file_views
from panel.views import memories as memory_views
from panel.views import providers as provider_views
from panel.views import records as record_views

app_name = "panel"

AGENT = "w/<str:workspace_id>/agents/<str:agent_id>/"
MEMORIES = "w/<str:workspace_id>/memories/"
MEMORY = MEMORIES + "<str:memory_id>/"
RECORDS = MEMORY + "records/"
PROVIDERS = "w/<str:workspace_id>/providers/"

urlpatterns = [
    path("login/", base.LoginView.as_view(), name="login"),
    path("logout/", base.LogoutView.as_view(), name="logout"),
    path("", overview.index, name="index"),
    path("w/<str:workspace_id>/", overview.overview, name="overview"),
    path(AGENT + "facts/", facts.fact_list, name="facts"),
    path(AGENT + "facts/<str:fact_id>/", facts.fact_detail, name="fact"),
    path(AGENT + "facts/<str:fact_id>/edit/", facts.fact_edit, name="fact-edit"),
    path(AGENT + "facts/<str:fact_id>/forget/", facts.fact_forget, name="fact-forget"),
    path("w/<str:workspace_id>/people/", people.people, name="people"),
    path("w/<str:workspace_id>/people/<str:external_id>/erase/", people.erase, name="erase"),
    path("w/<str:workspace_id>/purges/", operations.purge_jobs, name="purges"),
    path(
        "w/<str:workspace_id>/purges/<str:job_id>/retry/",
        operations.purge_retry,
        name="purge-retry",
    ),
    path("w/<str:workspace_id>/audit/", operations.audit_log, name="audit"),
    # --- record memories and memory providers -------------------------------------------
    path(RECORDS, record_views.record_list, name="records"),
    path(RECORDS + "<str:record_id>/edit/", record_views.record_edit, name="record-edit"),
    path(RECORDS + "<str:record_id>/delete/", record_views.record_delete, name="record-delete"),
    path(PROVIDERS, provider_views.provider_list, name="providers"),
    path(PROVIDERS + "new/", provider_views.provider_new, name="provider-new"),
    path(PROVIDERS + "<str:provider_id>/edit/", provider_views.provider_edit, name="provider-edit"),
    path(
        PROVIDERS + "<str:provider_id>/enabled/",
        provider_views.provider_enabled,
        name="provider-enabled",
    ),
    path(PROVIDERS + "<str:provider_id>/test/", provider_views.provider_test, name="provider-test"),
    # Memories and file memories (a file's path travels as ?path=).
    path(MEMORIES, memory_views.memory_list, name="memories"),
    path(MEMORIES + "new/", memory_views.memory_new, name="memory-new"),
    path(MEMORY, memory_views.memory_detail, name="memory"),
    path(MEMORY + "edit/", memory_views.memory_edit, name="memory-edit"),
    path(MEMORY + "delete/", memory_views.memory_delete, name="memory-delete"),
    path(MEMORY + "files/", file_views.file_list, name="files"),
    path(MEMORY + "files/new/", file_views.file_new, name="file-new"),
    path(MEMORY + "file/", file_views.file_detail, name="file"),
    path(MEMORY + "file/edit/", file_views.file_edit, name="file-edit"),
    path(MEMORY + "file/delete/", file_views.file_delete, name="file-delete"),
    path(MEMORY + "history/", file_views.history, name="history"),
    path(MEMORY + "history/purge/", file_views.history_purge, name="history-purge"),
    path(MEMORY + "revisions/<str:revision_id>/", file_views.revision_detail, name="revision"),
    path(
        MEMORY + "revisions/<str:revision_id>/restore/",
        file_views.revision_restore,
        name="revision-restore",
    ),
    # Threads and runs
    path("w/<str:workspace_id>/threads/", threads.thread_list, name="threads"),
    path("w/<str:workspace_id>/threads/<str:thread_id>/", threads.thread_detail, name="thread"),
    path("w/<str:workspace_id>/runs/<str:run_id>/", threads.run_detail, name="run"),
]
