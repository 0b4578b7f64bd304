from django.urls import path

from panel.views import base, facts, operations, overview, people, threads

app_name = "panel"

AGENT = "w/<str:workspace_id>/agents/<str:agent_id>/"

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
    # Threads and runs
    path("w/<str:workspace_id>/threads/", threads.thread_list, name="threads"),
    path("w/<str:workspace_id>/threads/<str:thread_id>/", threads.thread_detail, name="thread"),
    path("w/<str:workspace_id>/runs/<str:run_id>/", threads.run_detail, name="run"),
]
