"""Settings come from the environment, with safe defaults."""

import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from memoryhub.conf import DEFAULTS, env, env_name, load_from_environment, setting

# Every variable memoryhub.settings reads, and those of the memory.* (...) settings.
VARIABLES = (
    "MEMORYHUB_ENV", "DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "CSRF_TRUSTED_ORIGINS",
    "DATABASE_URL", "DB_CONN_MAX_AGE", "DB_CONNECT_TIMEOUT", "DB_PREPARED_STATEMENTS", "DB_JIT",
    "DB_PARALLEL", "STATIC_ROOT", "FORWARDED_ALLOW_IPS", "REDIS_URL", "MEMORYHUB_CACHE_DIR",
    "MEMORYHUB_BROKER_DIR", "CELERY_TASK_ALWAYS_EAGER", "MEMORYHUB_PURGE_SWEEP_SECONDS",
    "MEMORYHUB_PURGE_LEASE_SECONDS", "MEMORYHUB_CREDENTIAL_KEY", "LOG_LEVEL", "SECURE_COOKIES",
    *(env_name(name) for name in DEFAULTS),
)  # fmt: skip


UNSET = ("SECRET_KEY", "MEMORYHUB_ENV", "SECURE_COOKIES")


def _import_settings(
    given: dict, show: str = "s.DEBUG", unset: tuple = UNSET
) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in unset}
    return subprocess.run(
        [sys.executable, "-c", f"import memoryhub.settings as s; print({show})"],
        env={**clean, **given},
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


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("DEBUG", "ture", "DEBUG must be true or false (1/0, yes/no, on/off), got 'ture'"),
        ("SECURE_COOKIES", "", "SECURE_COOKIES must be true or false"),
        ("DB_JIT", "enabled", "DB_JIT must be true or false"),
        ("DB_CONN_MAX_AGE", "abc", "DB_CONN_MAX_AGE must be an integer, got 'abc'"),
        ("DB_CONNECT_TIMEOUT", "2.5", "DB_CONNECT_TIMEOUT must be an integer, got '2.5'"),
        ("MEMORYHUB_PURGE_SWEEP_SECONDS", "soon", "MEMORYHUB_PURGE_SWEEP_SECONDS must be a number"),
        ("MEMORYHUB_PURGE_LEASE_SECONDS", "nan", "MEMORYHUB_PURGE_LEASE_SECONDS must be a number"),
        ("MEMORYHUB_MEMORY_RECALL_LIMIT", "5x", "MEMORYHUB_MEMORY_RECALL_LIMIT must be an integer"),
        ("MEMORYHUB_OUTBOUND_ALLOW_HTTP", "ture", "MEMORYHUB_OUTBOUND_ALLOW_HTTP must be true or"),
        ("MEMORYHUB_ENV", "prod", "MEMORYHUB_ENV must be one of production, development, test"),
        ("LOG_LEVEL", "chatty", "LOG_LEVEL must be one of"),
    ],
)
def test_a_bad_value_stops_the_start_naming_its_variable(variable, value, expected):
    result = _import_settings({"SECRET_KEY": "s3cret", variable: value})
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert expected in result.stderr


@pytest.mark.parametrize(("value", "shown"), [(None, "1800.0"), ("60", "60.0"), ("soon", None)])
def test_the_mcp_session_idle_time_is_read_the_same_way(value, shown):
    code = "import django; django.setup(); from hub.mcp import http; print(http.IDLE_SECONDS)"
    given = {"SECRET_KEY": "s3cret", "DJANGO_SETTINGS_MODULE": "memoryhub.settings"}
    if value is not None:
        given["MEMORYHUB_MCP_IDLE_SECONDS"] = value
    clean = {k: v for k, v in os.environ.items() if k != "MEMORYHUB_MCP_IDLE_SECONDS"}
    result = subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, **given},
        capture_output=True,
        text=True,
        cwd=settings.BASE_DIR,
    )
    if shown is None:
        assert result.returncode != 0
        assert "MEMORYHUB_MCP_IDLE_SECONDS must be a number, got 'soon'" in result.stderr
    else:
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == shown


def test_the_settings_of_memory_refuse_a_bad_value_naming_its_variable():
    with pytest.raises(ImproperlyConfigured, match="MEMORYHUB_FACTS_MAX_BODY_BYTES must be an"):
        load_from_environment({"MEMORYHUB_FACTS_MAX_BODY_BYTES": "64k"})
    with pytest.raises(ImproperlyConfigured, match="MEMORYHUB_MEMORY_RECALL_SECONDS must be a"):
        load_from_environment({"MEMORYHUB_MEMORY_RECALL_SECONDS": "two"})


@pytest.mark.parametrize(
    ("raw", "value"),
    [("1", True), ("true", True), ("Yes", True), (" on ", True), ("TRUE", True),
     ("0", False), ("false", False), ("no", False), ("Off", False)],
)  # fmt: skip
def test_booleans_take_the_usual_spellings(raw, value):
    assert env("DEBUG", not value, environ={"DEBUG": raw}) is value


def test_every_variable_unset_gives_the_documented_defaults():
    shown = (
        "s.ENVIRONMENT, s.DEBUG, s.ALLOWED_HOSTS, s.CSRF_TRUSTED_ORIGINS,"
        " s.DATABASES['default']['NAME'], s.DATABASES['default']['HOST'],"
        " s.DATABASES['default']['CONN_MAX_AGE'], s.DATABASES['default']['OPTIONS'],"
        " s.MEMORYHUB_DB_JIT, s.MEMORYHUB_DB_PARALLEL, s.FORWARDED_ALLOW_IPS, s.REDIS_URL,"
        " s.CELERY_BROKER_URL, s.CELERY_TASK_ALWAYS_EAGER, s.PURGE_SWEEP_SECONDS,"
        " s.PURGE_LEASE_SECONDS, s.MEMORYHUB_CREDENTIAL_KEY, s.LOGGING['root']['level'],"
        " s.SESSION_COOKIE_SECURE, s.STATIC_ROOT == s.BASE_DIR / '.data' / 'static',"
        " s.BROKER_DIR == s.BASE_DIR / '.data' / 'broker',"
        " s.CACHES['default']['LOCATION'] == str(s.BASE_DIR / '.data' / 'cache'),"
        " s.MEMORYHUB_SETTINGS == __import__('memoryhub.conf').conf.DEFAULTS"
    )
    result = _import_settings({"SECRET_KEY": "s3cret"}, f"repr(({shown}))", unset=VARIABLES)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == repr(
        (
            "production", False, ["localhost", "127.0.0.1"], [],
            "memoryhub", "127.0.0.1", 60, {"connect_timeout": 5, "prepare_threshold": 5},
            False, False, ["127.0.0.1", "::1"], "",
            "filesystem://", False, 60.0,
            600.0, "", "INFO",
            True, True,
            True,
            True,
            True,
        )
    )  # fmt: skip


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
