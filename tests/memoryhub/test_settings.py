"""Settings come from the environment, with safe defaults."""

import os
import subprocess
import sys

import pytest
from django.conf import settings

from memoryhub.conf import DEFAULTS, load_from_environment, setting


def _import_settings(env: dict, show: str = "s.DEBUG") -> subprocess.CompletedProcess:
    names = ("SECRET_KEY", "MEMORYHUB_ENV", "SECURE_COOKIES")
    clean = {k: v for k, v in os.environ.items() if k not in names}
    return subprocess.run(
        [sys.executable, "-c", f"import memoryhub.settings as s; print({show})"],
        env={**clean, **env},
        capture_output=True,
        text=True,
        cwd=settings.BASE_DIR,
    )


def test_production_refuses_to_start_without_a_secret_key():
    result = _import_settings({})
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_production_starts_with_a_secret_key_and_debug_off():
    result = _import_settings({"SECRET_KEY": "s3cret"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_panel_cookies_go_over_https_only_in_production_unless_told():
    cookies = "s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE"
    production = _import_settings({"SECRET_KEY": "s3cret"}, cookies)
    plain_http = _import_settings({"SECRET_KEY": "s3cret", "SECURE_COOKIES": "0"}, cookies)
    development = _import_settings({"MEMORYHUB_ENV": "development"}, cookies)
    assert production.stdout.strip() == "True True", production.stderr
    assert plain_http.stdout.strip() == "False False", plain_http.stderr
    assert development.stdout.strip() == "False False", development.stderr


def test_documented_defaults():
    assert setting("memory.record_chars") == 8000
    assert setting("memory.recall_limit") == 5
    assert setting("memory.recall_bytes") == 8 * 1024
    assert setting("memory.recall_seconds") == 2
    assert setting("memory.mounts_per_thread") == 8
    assert setting("memory.context_bytes") == 32 * 1024
    assert setting("memory.max_file_bytes") == 64 * 1024
    assert setting("memory.revisions_per_file") == 10
    assert setting("memory.max_total_bytes") == 32 * 1024 * 1024
    assert setting("facts.max_facts_per_agent") == 100_000
    assert setting("outbound.allow_private") is False
    assert setting("outbound.allow_http") is False


def test_every_setting_can_be_overridden_by_the_environment():
    env = {
        "MEMORYHUB_MEMORY_RECALL_SECONDS": "0.5",
        "MEMORYHUB_MEMORY_MOUNTS_PER_THREAD": "3",
        "MEMORYHUB_MEMORY_DEFAULT_GUIDE_FILE": "Keep it short.",
        "MEMORYHUB_OUTBOUND_ALLOW_PRIVATE": "1",
    }
    values = load_from_environment(env)
    assert values["memory.recall_seconds"] == 0.5
    assert values["memory.mounts_per_thread"] == 3
    assert values["memory.default_guide.file"] == "Keep it short."
    assert values["outbound.allow_private"] is True
    assert set(values) == set(DEFAULTS)


@pytest.mark.parametrize(
    ("setting", "name", "ours", "server_default"),
    [
        ("MEMORYHUB_DB_JIT", "jit", "off", "on"),
        ("MEMORYHUB_DB_PARALLEL", "max_parallel_workers_per_gather", "0", "2"),
    ],
)
def test_database_sessions_turn_jit_and_parallel_workers_off_unless_asked(
    db, settings, setting, name, ours, server_default
):
    from django.db import connection, connections

    with connection.cursor() as cursor:
        cursor.execute(f"SHOW {name}")
        assert cursor.fetchone()[0] == ours
    setattr(settings, setting, True)
    fresh = connections.create_connection("default")
    try:
        with fresh.cursor() as cursor:
            cursor.execute(f"SHOW {name}")
            assert cursor.fetchone()[0] == server_default
    finally:
        fresh.close()
