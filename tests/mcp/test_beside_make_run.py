"""``memoryhub-mcp`` beside ``make run``: with nothing configured it finds make run's
embedded database and development settings, as ``manage.py`` does (it used to stop on
SECRET_KEY, then on a database "memoryhub" that does not exist)."""

from __future__ import annotations

import os
import subprocess
import sys

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.commands.conftest import ROOT
from tests.mcp.conftest import TIMEOUT, options_for, refused

CONFIGURED = {"MEMORYHUB_ENV", "SECRET_KEY", "DATABASE_URL", "DJANGO_SETTINGS_MODULE"}


def bare_environ(data_dir) -> dict[str, str]:
    """A desktop client's environment: nothing of memoryhub's set but where its data is."""
    environ = {k: v for k, v in os.environ.items() if k not in CONFIGURED}
    return {**environ, "MEMORYHUB_DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT)}


def postmaster_pid(data_dir, pid: int) -> None:
    """make run's embedded PostgreSQL, as its pid file describes it."""
    (data_dir / "pg").mkdir(parents=True)
    lines = [str(pid), str(data_dir / "pg"), "0", "5444", "/run/no-socket", "", "1", "ready"]
    (data_dir / "pg" / "postmaster.pid").write_text("\n".join(lines) + "\n")


def test_it_starts_with_make_runs_settings_when_nothing_is_configured(tmp_path):
    postmaster_pid(tmp_path, os.getpid())
    done = subprocess.run(  # noqa: S603 - our own argument list
        [sys.executable, "-m", "hub.mcp.stdio", "--run-token", "rt_x"],
        env=bare_environ(tmp_path),
        stdin=subprocess.DEVNULL,  # the client closes at once: the server ends cleanly
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "development settings, make run's database" in done.stderr
    assert "SECRET_KEY" not in done.stderr


def test_production_settings_still_need_their_secret_key(tmp_path):
    postmaster_pid(tmp_path, os.getpid())  # make run is up, but this is a configured server
    environ = {**bare_environ(tmp_path), "DATABASE_URL": "postgres://x@127.0.0.1:1/x"}
    done = subprocess.run(  # noqa: S603 - our own argument list
        [sys.executable, "-m", "hub.mcp.stdio"],
        env=environ,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "SECRET_KEY must be set" in done.stderr


@pytest.mark.slow
def test_a_desktop_client_reaches_make_runs_database(tmp_path):
    pgserver = pytest.importorskip("pgserver")
    server = pgserver.get_server(tmp_path / "pg", cleanup_mode="stop")
    try:
        server.psql('CREATE DATABASE "memoryhub";')
        environ = bare_environ(tmp_path)

        def manage(*args: str) -> str:
            done = subprocess.run(  # noqa: S603 - our own argument list
                [sys.executable, str(ROOT / "manage.py"), *args],
                env=environ,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert done.returncode == 0, done.stderr
            return done.stdout.strip()

        manage("migrate", "-v", "0")
        workspace = manage("create_workspace", "Acme")
        key = manage("create_api_key", "--workspace", workspace, "--permissions", "run")

        def connect(**credentials: str):
            parameters = StdioServerParameters(
                command=sys.executable,
                args=["-m", "hub.mcp.stdio", *options_for(**credentials)],
                env=environ,
                cwd=str(tmp_path),
            )
            return Client(parameters, read_timeout_seconds=TIMEOUT)

        async def ask() -> str:
            with anyio.fail_after(TIMEOUT * 3):
                return await refused(connect, api_key=key, agent="agt_nobody", end_user="ada")

        # The key was found and may run: what stops the session is the agent, looked up in
        # make run's database (no agent was made there).
        assert "names no agent of this workspace" in anyio.run(ask)
    finally:
        server.cleanup()
