"""``python -m bench.load`` as a subprocess, the way ``make load`` runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from django.conf import settings


def load_run(out: Path, *args: str, timeout: float = 240) -> dict:
    """The "load" figures a run wrote to ``out``; the run must have exited 0 (clean)."""
    environ = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "memoryhub.settings",
        "MEMORYHUB_ENV": "development",
        "PYTHONPATH": str(settings.BASE_DIR),
    }
    done = subprocess.run(  # noqa: S603 - our own interpreter and arguments
        [sys.executable, "-m", "bench.load", *args, "--out", str(out)],
        cwd=settings.BASE_DIR,
        env=environ,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(out.read_text())["load"]
