"""The client installs without the server: `pip install ./memoryhub/client` needs only
requests, and importing it loads nothing of Django or Celery."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from django.conf import settings

PACKAGE = Path(settings.BASE_DIR) / "memoryhub"


def test_the_client_distribution_holds_the_client_and_needs_only_requests(tmp_path):
    # Built from a copy (setuptools writes build/ beside the sources); --no-build-isolation:
    # setuptools is already here, so the test needs no package index.
    for part in ("client", "adapters"):
        shutil.copytree(PACKAGE / part, tmp_path / "src" / "memoryhub" / part)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        + ["-w", str(tmp_path), str(tmp_path / "src" / "memoryhub" / "client")],
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
