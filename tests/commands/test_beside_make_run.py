"""manage.py beside make run: its embedded database and the development settings, by itself."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from tests.commands.conftest import ROOT

spec = importlib.util.spec_from_file_location("manage_py", ROOT / "manage.py")
manage_py = importlib.util.module_from_spec(spec)
spec.loader.exec_module(manage_py)


def _postmaster_pid(data_dir, pid: int) -> None:
    (data_dir / "pg").mkdir(parents=True)
    lines = [str(pid), str(data_dir / "pg"), "0", "5444", "/run/sock dir", "", "1", "ready"]
    (data_dir / "pg" / "postmaster.pid").write_text("\n".join(lines) + "\n")


def test_a_running_embedded_database_is_found(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMORYHUB_DATA_DIR", str(tmp_path))
    _postmaster_pid(tmp_path, os.getpid())
    environ: dict = {}
    assert manage_py.beside_make_run(environ)
    assert environ == {
        "MEMORYHUB_ENV": "development",
        "DATABASE_URL": "postgres://postgres@%2Frun%2Fsock%20dir:5444/memoryhub",
    }


def test_a_stopped_one_or_any_configuration_leaves_everything_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMORYHUB_DATA_DIR", str(tmp_path))
    assert not manage_py.beside_make_run({})  # no make run here
    _postmaster_pid(tmp_path, 2**22 + 12345)  # a PID no process has
    assert not manage_py.beside_make_run({})
    (tmp_path / "pg" / "postmaster.pid").unlink()
    (tmp_path / "pg").rmdir()
    _postmaster_pid(tmp_path, os.getpid())
    for configured in ("MEMORYHUB_ENV", "SECRET_KEY", "DATABASE_URL"):
        environ = {configured: "production"}
        assert not manage_py.beside_make_run(environ)
        assert environ == {configured: "production"}


def _bare_environ(tmp_path) -> dict:
    unset = {"MEMORYHUB_ENV", "SECRET_KEY", "DATABASE_URL", "DJANGO_SETTINGS_MODULE"}
    environ = {k: v for k, v in os.environ.items() if k not in unset}
    return {**environ, "MEMORYHUB_DATA_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}


def test_production_still_refuses_to_start_without_a_secret_key(tmp_path):
    environ = {**_bare_environ(tmp_path), "DATABASE_URL": "postgres://x@127.0.0.1:1/x"}
    done = subprocess.run(  # noqa: S603
        [sys.executable, str(ROOT / "manage.py"), "create_workspace", "Acme"],
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "SECRET_KEY must be set" in done.stderr


@pytest.mark.slow
def test_the_readme_command_works_beside_the_embedded_database(tmp_path):
    pgserver = pytest.importorskip("pgserver")
    server = pgserver.get_server(tmp_path / "pg", cleanup_mode="stop")
    try:
        server.psql('CREATE DATABASE "memoryhub";')
        environ = _bare_environ(tmp_path)

        def manage(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run(  # noqa: S603
                [sys.executable, str(ROOT / "manage.py"), *args],
                env=environ,
                capture_output=True,
                text=True,
                timeout=300,
                cwd=tmp_path,
            )

        assert manage("migrate", "-v", "0").returncode == 0
        made = manage("create_workspace", "Acme")
        assert made.returncode == 0, made.stderr
        assert made.stdout.strip().startswith("ws_")
        assert "development settings" in made.stderr
    finally:
        server.cleanup()
