"""A real Chromium (Debian's, never a downloaded one) driving the panel on a live server
that holds the `make run` demo, seeded over HTTP as an agent runtime would.

Set MEMORYHUB_SCREENSHOTS to a folder to keep a PNG of every page a test shows
(`make screenshots` does).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from memoryhub import demo
from panel.models import Membership, Role
from tests.panel.conftest import PASSWORD, person

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
# Without the background-networking flags Chromium keeps calling out of this closed machine.
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LAPTOP = {"width": 1280, "height": 800}


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    # Playwright's sync API keeps an event loop in this thread while it runs: the ORM calls
    # of a test body are still synchronous, which Django's guard can't tell; and it must stop
    # with this package, or later tests that run an event loop of their own can't.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield browser
        browser.close()
    del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]


class Panel:
    """One logged-in browser context on the live server, with its console errors."""

    def __init__(self, browser: Browser, base_url: str) -> None:
        self.context = browser.new_context(base_url=base_url, viewport=LAPTOP)
        self.context.set_default_timeout(10_000)
        self.page = self.context.new_page()
        self.errors: list[str] = []  # console errors, CSP violations included
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def _console(self, message) -> None:
        # A page answered with a 4xx status (a refusal the test looks at) is not an error
        # of the page; anything it fails to load (a stylesheet, an image) is.
        if message.type == "error" and message.location.get("url") != self.page.url:
            self.errors.append(message.text)

    def log_in(self, username: str) -> Page:
        page = self.page
        page.goto("/panel/")
        page.get_by_label("Username").fill(username)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(re.compile(r"/panel/(w/[^/]+/)?$"))
        return page


def shot(page: Page, name: str) -> None:
    """Keep a full-page PNG of what the page shows now, when screenshots are asked for."""
    folder = os.environ.get("MEMORYHUB_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


@pytest.fixture
def seeded(live_server, tenant) -> demo.Demo:
    """The demo of `make run`, in the tenant's workspace."""
    return demo.seed(live_server.url, tenant.keys["write"])


@pytest.fixture
def staff(tenant):
    """Ada, an admin of the demo workspace, and Ed, an editor."""
    for username, role in (("ada", Role.ADMIN), ("ed", Role.EDITOR)):
        Membership.objects.create(user=person(username), workspace=tenant.workspace, role=role)


@pytest.fixture
def panels(browser, live_server, staff) -> Iterator[Callable[[], Panel]]:
    """Opens browser contexts of their own (two people at once); none may log an error."""
    opened: list[Panel] = []

    def open_one() -> Panel:
        opened.append(Panel(browser, live_server.url))
        return opened[-1]

    yield open_one
    for each in opened:
        each.context.close()
    errors = [error for each in opened for error in each.errors]
    assert not errors, f"the browser reported errors: {errors}"


@pytest.fixture
def panel(panels) -> Panel:
    return panels()
