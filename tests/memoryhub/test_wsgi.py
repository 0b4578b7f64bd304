"""The WSGI entry point gunicorn loads."""

import gc

import pytest
from django.test import Client


@pytest.mark.django_db
def test_the_wsgi_app_serves_and_leaves_its_startup_objects_out_of_gc_sweeps():
    from memoryhub import wsgi

    try:
        assert gc.get_freeze_count() > 10_000  # the loaded views, models and settings
        response = Client().get("/healthz")
        assert response.status_code == 200
        assert callable(wsgi.application)
    finally:
        gc.unfreeze()
