"""File memories, threads and runs in a real Chromium: two people editing one file, a
revision restored, what a run received, and a tour of the remaining pages."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from records.services import records
from tests.browser.conftest import shot
from tests.records import conftest as mem0_fixtures
from tests.records.conftest import record_memory

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# The faithful local mem0 server over a real socket, for the records page of the tour.
allow_loopback, oss_server = mem0_fixtures.allow_loopback, mem0_fixtures.oss_server
oss_provider = mem0_fixtures.oss_provider


def memory_path(tenant, seeded, rest: str = "") -> str:
    return f"/panel/w/{tenant.workspace.id}/memories/{seeded.handbook_id}/{rest}"


def open_edit(page: Page, tenant, seeded, path: str) -> None:
    page.goto(memory_path(tenant, seeded, f"file/edit/?path={path}"))
    expect(page.get_by_label("Content")).to_contain_text("Greet the customer")


def test_a_conflicting_edit_overwrites_nothing_and_shows_the_other_change(panels, tenant, seeded):
    ed, ada = panels().log_in("ed"), panels().log_in("ada")
    open_edit(ed, tenant, seeded, "guide.md")
    open_edit(ada, tenant, seeded, "guide.md")  # both start from the same version

    ed.get_by_label("Content").fill("# How we answer\n\nGreet the customer by first name.\n")
    ed.get_by_role("button", name="Save").click()
    expect(ed.get_by_role("status")).to_be_visible()

    mine = "# How we answer\n\nGreet the customer warmly.\n"
    ada.get_by_label("Content").fill(mine)
    ada.get_by_role("button", name="Save").click()
    conflict = ada.get_by_role("alert")  # answered 412 Precondition Failed
    expect(conflict).to_contain_text("Nothing was overwritten")
    expect(ada.locator("ins", has_text="first name").first).to_be_visible()  # the other change
    expect(ada.get_by_label("Content")).to_have_value(mine)  # her text waits to be retried
    shot(ada, "file-conflict")

    ed.goto(memory_path(tenant, seeded, "file/?path=guide.md"))
    expect(ed.get_by_role("main")).to_contain_text("Greet the customer by first name.")
    expect(ed.get_by_role("main")).not_to_contain_text("warmly")


def test_restoring_a_revision_brings_its_content_back(panel, tenant, seeded):
    page = panel.log_in("ed")
    page.goto(memory_path(tenant, seeded, "history/?path=escalation.md"))
    expect(page.get_by_role("main")).to_contain_text("300 EUR")
    shot(page, "file-history")
    page.get_by_role("link", name="Restore this version…").first.click()
    shot(page, "file-restore")
    page.get_by_role("button", name="Restore").click()
    expect(page.get_by_role("status")).to_contain_text("Restored escalation.md")
    page.goto(memory_path(tenant, seeded, "file/?path=escalation.md"))
    expect(page.get_by_role("main")).to_contain_text("Refunds over 500 EUR go to a supervisor.")
    shot(page, "file")


def test_a_run_shows_the_context_it_received(panel, tenant, seeded):
    page = panel.log_in("ada")
    page.get_by_role("link", name="Threads").click()
    shot(page, "threads")
    page.get_by_role("row", name=re.compile("ayse")).get_by_role("link").first.click()
    shot(page, "thread")
    page.goto(f"/panel/w/{tenant.workspace.id}/runs/{seeded.run_ids[0]}/")
    # The first run of the thread was given the handbook's guide in full.
    context = page.get_by_label("Context block")
    expect(context).to_contain_text("The team handbook: how we answer customers.")
    expect(page.get_by_role("main")).to_contain_text("Merhaba, İstanbul'dan yazıyorum.")
    shot(page, "run")


def test_a_tour_of_memories_records_and_providers(panel, tenant, seeded, oss_provider):
    memory = record_memory(tenant, oss_provider)
    records.add_record(tenant.owner, memory, "Ayşe prefers the morning ferry", None)
    page = panel.log_in("ada")
    page.get_by_role("link", name="Memories").click()
    expect(page.get_by_role("main")).to_contain_text("Team handbook")
    shot(page, "memories")
    page.goto(memory_path(tenant, seeded))
    expect(page.get_by_role("main")).to_contain_text("Always loaded")
    shot(page, "memory")
    page.goto(memory_path(tenant, seeded, "files/"))
    expect(page.get_by_role("main")).to_contain_text("escalation.md")
    shot(page, "files")
    page.goto(f"/panel/w/{tenant.workspace.id}/memories/{memory.id}/records/")
    expect(page.get_by_role("main")).to_contain_text("Ayşe prefers the morning ferry")
    shot(page, "records")
    page.get_by_role("link", name="Providers").click()
    expect(page.get_by_role("main")).to_contain_text(oss_provider.name)
    shot(page, "providers")
