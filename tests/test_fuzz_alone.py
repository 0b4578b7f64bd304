"""`make fuzz` runs the schemathesis module on its own: it must use a test database of its own,
never the database DATABASE_URL names (it once seeded and then flushed that one)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from django.db import connection

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent


def _server() -> tuple[str, str, str]:
    db = connection.settings_dict
    return db["USER"], db["HOST"] or "127.0.0.1", str(db["PORT"] or 5432)


def _admin_url(dbname: str) -> str:
    user, host, port = _server()
    return f"host={host} port={port} user={user} dbname={dbname}"


def test_the_fuzz_module_alone_leaves_the_real_database_alone():
    name = f"mh_fuzz_alone_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(_admin_url("postgres"), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        with psycopg.connect(_admin_url(name), autocommit=True) as real:
            real.execute("CREATE TABLE sentinel (note text)")
            real.execute("INSERT INTO sentinel VALUES ('an operator''s data')")
        user, host, port = _server()
        url = f"postgres://{user}@{host.replace('/', '%2F')}:{port}/{name}"
        env = dict(os.environ, DATABASE_URL=url, MEMORYHUB_FUZZ_EXAMPLES="1")
        module = ["tests/test_schemathesis.py", "-p", "no:cacheprovider"]
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "--ds=memoryhub.test_settings", "-q", *module],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        with psycopg.connect(_admin_url(name)) as real:
            tables = real.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
            tables = [table for (table,) in tables]
            kept = real.execute("SELECT note FROM sentinel").fetchall()
        assert tables == ["sentinel"], "the fuzz run migrated the real database"
        assert kept == [("an operator's data",)]
    finally:
        with psycopg.connect(_admin_url("postgres"), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.execute(f'DROP DATABASE IF EXISTS "test_{name}" WITH (FORCE)')
