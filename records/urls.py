"""This app's /api/v1 endpoints."""

urlpatterns: list = []
