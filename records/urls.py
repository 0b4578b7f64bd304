"""This app's /api/v1 endpoints."""

from django.urls import path

from records import api

urlpatterns: list = [
    path("memory-providers", api.ProviderListView.as_view()),
    path("memory-providers/<mhid:provider_id>", api.ProviderDetailView.as_view()),
    path("memory-providers/<mhid:provider_id>/test", api.ProviderTestView.as_view()),
    path("memories/<mhid:memory_id>/records", api.RecordListView.as_view()),
    path("memories/<mhid:memory_id>/records/search", api.RecordSearchView.as_view()),
    path("memories/<mhid:memory_id>/records/<str:record_id>", api.RecordDetailView.as_view()),
]
