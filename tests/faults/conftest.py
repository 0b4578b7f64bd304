"""Live servers for the fault tests: a gunicorn on a given database and broker, with its
error log in a file the test reads."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests
from django.conf import settings

from memoryhub.embedded import free_port
from support.outages import ANSWER_WITHIN
from support.servers import GUNICORN
from support.workers import stop, wait_until_up


def environment(**env: str) -> dict[str, str]:
    return {
        **os.environ,
        "MEMORYHUB_ENV": "test",
        "DJANGO_SETTINGS_MODULE": "memoryhub.settings",
        **env,
    }


@contextmanager
def gunicorn(log: Path, **env: str) -> Iterator[tuple[str, subprocess.Popen]]:
    """The README's production gunicorn with two workers, its error log written to ``log``;
    yields its URL."""
    port = free_port()
    server = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        [sys.executable, "-m", "gunicorn", *GUNICORN,
         "--bind", f"127.0.0.1:{port}", "--workers", "2", "--timeout", "60",
         "--log-level", "warning"],
        env=environment(**env),
        cwd=settings.BASE_DIR,
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_up(url, server)
        yield url, server
    finally:
        stop(server)


def timed(method: str, url: str, **kwargs) -> requests.Response:
    """The answer, which must come within ANSWER_WITHIN: never a hang."""
    started = time.monotonic()
    response = requests.request(method, url, timeout=ANSWER_WITHIN, **kwargs)
    assert time.monotonic() - started < ANSWER_WITHIN
    return response


def until(status: int, method: str, url: str, seconds: float = 30, **kwargs) -> requests.Response:
    """Repeats the request until it answers ``status``: recovery without a restart."""
    deadline = time.monotonic() + seconds
    while (answer := timed(method, url, **kwargs)).status_code != status:
        assert answer.status_code < 500 or answer.status_code == 503, answer.text[:300]
        assert time.monotonic() < deadline, f"no {status} within {seconds} s: {answer.text}"
        time.sleep(0.2)
    return answer
