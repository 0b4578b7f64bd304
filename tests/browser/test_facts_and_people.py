"""Staff in a real Chromium: log in, find and correct a person's fact, erase a person, and
see that memory content never runs as script."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import shot
from tests.facts.conftest import run_for, save
from tests.panel.conftest import person

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def facts_path(tenant, seeded) -> str:
    return f"/panel/w/{tenant.workspace.id}/agents/{seeded.agent_id}/facts/"


def test_a_member_logs_in_to_the_overview_of_their_workspace(panel, tenant, seeded):
    page = panel.log_in("ada")
    expect(page.get_by_role("heading", level=1)).to_have_text(tenant.workspace.name)
    expect(page.get_by_role("cell", name="Concierge")).to_be_visible()
    expect(page.get_by_role("cell", name="Team handbook")).to_be_visible()
    shot(page, "overview")


def test_a_superuser_picks_a_workspace(panel, tenant, other_tenant, seeded):
    person("root", superuser=True)
    page = panel.log_in("root")
    expect(page.get_by_role("link", name=other_tenant.workspace.name)).to_be_visible()
    shot(page, "index")
    page.get_by_role("link", name=tenant.workspace.name).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(tenant.workspace.name)


def test_a_wrong_password_is_refused_on_the_login_page(panel, seeded):
    page = panel.page
    page.goto("/panel/")
    page.get_by_label("Username").fill("ada")
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_be_visible()
    assert "/panel/login/" in page.url
    shot(page, "login")


def test_a_turkish_word_in_capitals_finds_the_persons_fact(panel, tenant, seeded):
    page = panel.log_in("ed")
    page.goto(facts_path(tenant, seeded))
    shot(page, "facts")
    page.get_by_role("searchbox").or_(page.get_by_label("Search")).first.fill("İZMİR ÇAY")
    page.get_by_role("button", name="Show").click()
    results = page.locator("table tbody tr")
    expect(results.first).to_contain_text("Ayşe İzmir'de yaşıyor")
    expect(results.first).to_contain_text("users/ayse/")
    shot(page, "facts-search")


def test_correcting_a_fact_shows_the_new_version_with_a_diff(panel, tenant, seeded):
    page = panel.log_in("ed")
    fact_id = seeded.facts["Bob prefers metric units and short answers."]
    page.goto(facts_path(tenant, seeded) + f"{fact_id}/")
    page.get_by_role("link", name="Correct this fact").click()
    page.get_by_label("Text").fill("Bob prefers metric units and detailed answers.")
    page.get_by_role("button", name="Save the correction").click()
    expect(page.get_by_role("status")).to_contain_text("Saved version 2")
    newest = page.locator(".versions > li").first
    expect(newest).to_contain_text("ed")  # the person who corrected it
    expect(newest.locator("del")).to_have_text(re.compile("short"))
    expect(newest.locator("ins")).to_have_text(re.compile("detailed"))
    shot(page, "fact")


def test_erasing_a_person_says_what_goes_then_gives_a_receipt(panel, tenant, seeded):
    page = panel.log_in("ada")
    page.goto(f"/panel/w/{tenant.workspace.id}/people/")
    shot(page, "people")
    page.get_by_role("row", name=re.compile("bob")).get_by_role("link", name="Erase").click()
    expect(page.get_by_role("main")).to_contain_text("2 facts")
    shot(page, "erase")
    page.get_by_role("button", name="Erase bob").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Erased")
    shot(page, "erased")
    page.goto(facts_path(tenant, seeded) + "?query=peanuts")
    expect(page.get_by_role("main")).not_to_contain_text("allergic to peanuts")


def test_a_script_in_a_fact_is_shown_as_text_and_never_runs(panel, tenant, agent):
    _, api = run_for(tenant, agent, "mallory")
    script = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'
    save(api, "users/{user}/", script)
    page = panel.log_in("ed")
    page.goto(f"/panel/w/{tenant.workspace.id}/agents/{agent.id}/facts/")
    expect(page.get_by_role("link", name=re.compile("<script>window.pwned"))).to_be_visible()
    page.get_by_role("link", name=re.compile("<script>window.pwned")).click()
    expect(page.get_by_role("main")).to_contain_text(script)
    assert page.evaluate("window.pwned") is None


def test_the_audit_log_filters_by_action_and_purge_jobs_render(panel, tenant, seeded):
    page = panel.log_in("ada")
    page.get_by_role("link", name="Audit log").click()
    page.get_by_label("Action").fill("run.accept")
    page.get_by_role("button", name="Filter").click()
    rows = page.locator("table tbody tr")
    expect(rows).to_have_count(len(seeded.run_ids))
    shot(page, "audit")
    page.get_by_role("link", name="Purge jobs").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Purge")
    shot(page, "purges")
