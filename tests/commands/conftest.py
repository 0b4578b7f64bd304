"""Running commands as an operator does: through call_command, and as manage.py processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> str:
    """call_command's stdout."""
    from django.core.management import call_command

    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def run_json(*args: str):
    return json.loads(run(*args, "--json"))


@pytest.fixture
def manage(transactional_db):
    """Run ``manage.py ARGS`` in a process against the test database; (rc, stdout, stderr)."""
    settings = connection.settings_dict
    url = f"postgres://{settings['USER']}@{settings['HOST']}:{settings['PORT']}/{settings['NAME']}"
    environ = {**os.environ, "DATABASE_URL": url, "PYTHONPATH": str(ROOT)}
    environ["DJANGO_SETTINGS_MODULE"] = "memoryhub.test_settings"

    def call(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(  # noqa: S603 - our own argument list
            [sys.executable, str(ROOT / "manage.py"), *args],
            env=environ,
            capture_output=True,
            text=True,
            timeout=120,
        )

    return call


# The fake mem0 servers and a provider on one, for the commands that read records.
from tests.records.conftest import (  # noqa: E402,F401
    allow_loopback,
    platform_provider,
    platform_server,
)
