"""This app's /api/v1 endpoints: a file memory's files and history."""

from django.urls import path, register_converter

from filememory import api


class AnyPathConverter:
    """Any non-empty rest of the URL, newlines included, so the path check sees it all."""

    regex = r"[\s\S]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(AnyPathConverter, "filepath")

urlpatterns = [
    path("memories/<mhid:memory_id>/files", api.FileTreeView.as_view()),
    path("memories/<mhid:memory_id>/files/<filepath:file_path>", api.FileDetailView.as_view()),
    path("memories/<mhid:memory_id>/revisions", api.RevisionListView.as_view()),
    path(
        "memories/<mhid:memory_id>/revisions/<mhid:revision_id>",
        api.RevisionDetailView.as_view(),
    ),
    path(
        "memories/<mhid:memory_id>/revisions/<mhid:revision_id>/restore",
        api.RevisionRestoreView.as_view(),
    ),
]
