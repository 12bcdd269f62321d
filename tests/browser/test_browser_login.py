"""Login: every reviewer page sends anonymous visitors to the login form; logging in lands on the dashboard."""

from __future__ import annotations

import pytest

from curation.services.roles import Role

from .conftest import axe_violations, log_in, make_user

pytestmark = pytest.mark.django_db(transaction=True)


def test_anonymous_visitor_is_sent_to_login_and_lands_on_the_dashboard(page):
    make_user("rita", Role.REVIEWER)
    page.goto("/")
    assert "/accounts/login/" in page.url
    log_in(page, "rita")
    assert page.get_by_role("heading", name="Dashboard").is_visible()
    assert "rita" in page.locator(".user-box").inner_text()


def test_wrong_password_is_refused_with_a_message(page):
    make_user("rita", Role.REVIEWER)
    page.goto("/accounts/login/")
    page.get_by_label("User name").fill("rita")
    page.get_by_label("Password").fill("not-her-password")
    page.get_by_role("button", name="Log in").click()
    assert page.get_by_role("alert").inner_text().startswith("Your user name and password didn't match")


def test_login_page_has_no_serious_accessibility_violation(page):
    page.goto("/accounts/login/")
    assert axe_violations(page) == []
