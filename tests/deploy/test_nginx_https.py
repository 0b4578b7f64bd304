"""``deploy/nginx.conf`` over HTTPS, live: Debian's nginx with the shipped server block (a
certificate made for 127.0.0.1) in front of gunicorn (2 workers, secure cookies and Redis
as in production).

HTTPS answers carry Strict-Transport-Security, the app's own and nginx's refusals too; plain
HTTP serves the same app without it (as the file documents). The panel logs in over HTTPS
with its secure cookies, and wrong passwords are counted across gunicorn's workers.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.core.management import call_command

from memoryhub.embedded import free_port
from support.servers import GUNICORN, NGINX, nginx_prefix, server_environment, start_nginx
from support.workers import stop, wait_until_up

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

HSTS = "max-age=31536000"
PASSWORD = "correct horse battery staple"
PROMPT = 10  # seconds


@dataclass
class Stack:
    https: str
    http: str
    cert: Path
    users: dict[str, str]  # what each test logs in as -> username

    def session(self, address: str) -> requests.Session:
        """A browser: it trusts the test certificate, and comes from ``address``.

        Its requests reach nginx from 127.0.0.1, a trusted proxy address, so the app takes
        the address nginx passes on after it: the test's own, never shared with other runs.
        """
        session = requests.Session()
        session.trust_env = False  # REQUESTS_CA_BUNDLE would replace the certificate below
        session.verify = str(self.cert)
        session.headers["X-Forwarded-For"] = address
        return session


def _gunicorn(port: int, log: Path, origin: str) -> subprocess.Popen:
    environ = server_environment()
    # Production's: cookies over HTTPS only, counts in Redis (shared by the workers).
    environ.update(SECURE_COOKIES="1", REDIS_URL=settings.CACHES["default"]["LOCATION"])
    # nginx passes the Host without its port (`$host`): a port other than 443 is an origin
    # the operator names, for the panel's CSRF check.
    environ.update(CSRF_TRUSTED_ORIGINS=origin)
    command = [sys.executable, "-m", "gunicorn", *GUNICORN, "--workers", "2"]
    return subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        [*command, "--bind", f"127.0.0.1:{port}", "--log-level", "warning"],
        env=environ,
        cwd=settings.BASE_DIR,
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
    )


@pytest.fixture(scope="module")
def stack(django_db_setup, django_db_blocker) -> Iterator[Stack]:
    if not shutil.which(NGINX) and not Path(NGINX).exists():
        pytest.fail("these tests need Debian's nginx: apt-get install nginx")
    users = {use: f"{use}-{uuid.uuid4().hex[:8]}" for use in ("login", "guessed")}
    # Hashed as the server checks passwords (the tests' own settings hash with MD5).
    hasher = PBKDF2PasswordHasher()
    with django_db_blocker.unblock():
        for username in users.values():
            user = get_user_model().objects.create_superuser(username)
            user.password = hasher.encode(PASSWORD, hasher.salt())
            user.save()
    prefix = nginx_prefix()
    web, port, tls_port = free_port(), free_port(), free_port()
    https = f"https://127.0.0.1:{tls_port}"
    servers = [_gunicorn(web, prefix / "gunicorn.log", https)]
    try:
        servers.append(start_nginx(prefix, port, web, free_port(), tls_port=tls_port))
        http = f"http://127.0.0.1:{port}"
        wait_until_up(http, servers[-1])
        yield Stack(https, http, prefix / "memoryhub.crt", users)
    finally:
        for server in reversed(servers):
            stop(server)
        shutil.rmtree(prefix, ignore_errors=True)
        with django_db_blocker.unblock():
            call_command("flush", verbosity=0, interactive=False)


def unique_address() -> str:
    return f"2001:db8:{uuid.uuid4().hex[:4]}::{uuid.uuid4().hex[:4]}"


def test_https_reaches_the_app_and_carries_hsts(stack):
    browser = stack.session(unique_address())
    health = browser.get(stack.https + "/healthz", timeout=PROMPT)
    assert health.status_code == 200 and health.json()["status"] == "ok"
    assert health.headers["Strict-Transport-Security"] == HSTS
    refused = browser.get(stack.https + "/api/v1/agents", timeout=PROMPT)  # the app's 401
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "unauthenticated"
    assert refused.headers["Strict-Transport-Security"] == HSTS
    too_long = browser.get(stack.https + "/api/v1/agents?q=" + "a" * 5000, timeout=PROMPT)
    assert too_long.status_code == 414  # nginx's own refusal, in the envelope
    assert too_long.json()["error"]["code"] == "uri_too_long"
    assert too_long.headers["Strict-Transport-Security"] == HSTS


def test_plain_http_serves_the_same_app_without_hsts(stack):
    health = requests.get(stack.http + "/healthz", timeout=PROMPT)
    assert health.status_code == 200 and health.json()["status"] == "ok"
    assert "Strict-Transport-Security" not in health.headers
    refused = requests.get(stack.http + "/api/v1/agents", timeout=PROMPT)
    assert refused.status_code == 401 and "Strict-Transport-Security" not in refused.headers


def _log_in(browser: requests.Session, stack: Stack, user: str, password: str):
    page = browser.get(stack.https + "/panel/login/", timeout=PROMPT)
    assert page.status_code == 200, page.text
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    return browser.post(
        stack.https + "/panel/login/",
        data={"username": stack.users[user], "password": password, "csrfmiddlewaretoken": token},
        headers={"Referer": stack.https + "/panel/login/"},
        allow_redirects=False,
        timeout=PROMPT,
    )


def test_the_panel_logs_in_over_https_with_secure_cookies(stack):
    browser = stack.session(unique_address())
    response = _log_in(browser, stack, "login", PASSWORD)
    assert response.status_code == 302 and response.headers["Location"] == "/panel/"
    cookies = {cookie.name: cookie for cookie in browser.cookies}
    assert cookies["sessionid"].secure and cookies["csrftoken"].secure
    assert response.headers["Strict-Transport-Security"] == HSTS
    assert browser.get(stack.https + "/panel/", timeout=PROMPT).status_code == 200


def test_wrong_passwords_are_counted_across_the_workers(stack):
    browser = stack.session(unique_address())
    for _ in range(5):  # each a new connection: gunicorn's two workers share them
        wrong = _log_in(browser, stack, "guessed", "wrong")
        assert wrong.status_code == 200 and "didn't match" in wrong.text
    refused = _log_in(browser, stack, "guessed", PASSWORD)
    assert refused.status_code == 429
    assert "Too many failed logins for this account." in refused.text
    assert int(refused.headers["Retry-After"]) > 0
    assert "sessionid" not in {cookie.name for cookie in browser.cookies}
