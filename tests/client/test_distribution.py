"""The client installs without the server: `pip install ./memoryhub/client` needs only
requests, and importing it loads nothing of Django or Celery."""

from __future__ import annotations

import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
from django.conf import settings

from tests.documented import install_line

PACKAGE = Path(settings.BASE_DIR) / "memoryhub"


def checkout_copy(tmp_path: Path) -> Path:
    """The client's folders in a checkout-shaped tree (building writes build/ beside them)."""
    for part in ("client", "adapters"):
        shutil.copytree(PACKAGE / part, tmp_path / "src" / "memoryhub" / part)
    return tmp_path / "src"


def test_the_client_distribution_holds_the_client_and_needs_only_requests(tmp_path):
    # --no-build-isolation: setuptools is already here, so the test needs no package index.
    source = checkout_copy(tmp_path) / "memoryhub" / "client"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        + ["-w", str(tmp_path), str(source)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    [wheel] = tmp_path.glob("memoryhub_client-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        [metadata] = [n for n in names if n.endswith("METADATA")]
        requires = [
            line.split(":", 1)[1].strip()
            for line in archive.read(metadata).decode().splitlines()
            if line.startswith("Requires-Dist:")
        ]
    modules = {n for n in names if n.endswith(".py")}
    assert "memoryhub/client/hub.py" in modules
    assert "memoryhub/adapters/openai_agents.py" in modules
    assert "memoryhub/__init__.py" not in modules  # no server package comes along
    assert requires == ["requests>=2.32", 'openai-agents>=0.24.0; extra == "openai-agents"']


def test_the_client_imports_nothing_of_django():
    code = (
        "import sys, memoryhub.client; "
        "assert not [m for m in sys.modules if m.split('.')[0] in ('django', 'celery')]"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=settings.BASE_DIR, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
def test_the_readme_install_line_works_in_a_fresh_environment(tmp_path):
    """The README's line, as written, in a new virtualenv (fetches requests from the index)."""
    venv.create(tmp_path / "env", with_pip=True)
    bin_dir = tmp_path / "env" / "bin"
    command = install_line()
    command[0] = str(bin_dir / command[0])
    subprocess.run(command, cwd=checkout_copy(tmp_path), check=True, capture_output=True)
    code = (
        "import importlib.util, memoryhub.client, memoryhub.adapters; "
        "assert importlib.util.find_spec('django') is None"
    )
    result = subprocess.run(
        [str(bin_dir / "python"), "-c", code], cwd=tmp_path, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
