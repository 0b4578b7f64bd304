from django.urls import path

from threads import api

urlpatterns = [
    path("threads", api.ThreadListView.as_view()),
    path("threads/<mhid:thread_id>", api.ThreadDetailView.as_view()),
    path("threads/<mhid:thread_id>/fork", api.ThreadForkView.as_view()),
    path("threads/<mhid:thread_id>/archive", api.ThreadArchiveView.as_view()),
    path("threads/<mhid:thread_id>/runs", api.RunAcceptView.as_view()),
    path("threads/<mhid:thread_id>/memories", api.ThreadMountListView.as_view()),
    path("threads/<mhid:thread_id>/memories/<str:name>", api.ThreadMountDetailView.as_view()),
    path("runs/current", api.OwnRunView.as_view()),
    path("runs/<mhid:run_id>", api.RunDetailView.as_view()),
    path("runs/<mhid:run_id>/end", api.RunEndView.as_view()),
    path("runs/<mhid:run_id>/tool-calls", api.ToolCallView.as_view()),
]
