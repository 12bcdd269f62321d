"""Browser tests: Playwright for Python driving Debian's Chromium against pytest-django's live server.

Chromium is the system one (``/usr/bin/chromium``, or ``$STEPTP_CHROMIUM``), headless with
``--no-sandbox --disable-gpu``; Playwright downloads nothing. Every failing test leaves a full-page
screenshot in ``var/screenshots/<test>.png``. ``axe_violations`` injects axe-core (from npm, copied into
``static/vendor`` by ``make assets``) and returns the serious and critical violations on the page.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "var" / "screenshots"
AXE = REPO / "static" / "vendor" / "axe.min.js"
PASSWORD = "review-pass-123"


def chromium_path() -> str:
    path = os.environ.get("STEPTP_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        raise RuntimeError("Chromium is not installed: apt-get install -y chromium (.ci/run does this)")
    return path


@pytest.fixture(scope="module")
def browser() -> Iterator:
    """Chromium for one test module; Playwright (and its event loop) is gone before the next module runs.

    Playwright's sync API runs an event loop in this thread, so Django refuses ORM calls made between
    browser actions unless ``DJANGO_ALLOW_ASYNC_UNSAFE`` is set. They are synchronous and safe here; the
    variable is set only while a browser is open, so no other test (``check --deploy`` refuses it) sees it.
    """
    from playwright.sync_api import sync_playwright

    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=chromium_path(), headless=True,
                                                  args=["--no-sandbox", "--disable-gpu"])
            yield chromium
            chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


def _screenshot_name(nodeid: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid.split("::", 1)[-1])[:150] + ".png"


@pytest.fixture
def new_page(browser, request, live_server):
    """A factory of pages, each in its own browser context (own cookies); all screenshotted on failure."""
    contexts = []

    def make():
        context = browser.new_context(base_url=live_server.url, viewport={"width": 1400, "height": 900})
        context.set_default_timeout(15_000)
        contexts.append(context)
        return context.new_page()

    yield make
    failed = any(getattr(request.node, f"report_{when}", None) is not None
                 and getattr(request.node, f"report_{when}").failed for when in ("setup", "call"))
    for index, context in enumerate(contexts):
        if failed:
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            for page in context.pages:
                name = _screenshot_name(request.node.nodeid)
                if index:
                    name = name.replace(".png", f"-{index}.png")
                page.screenshot(path=str(SCREENSHOTS / name), full_page=True)
        context.close()


@pytest.fixture
def page(new_page):
    return new_page()


def make_user(username: str, role) -> object:
    """A user holding ``role`` (``curation.services.roles.Role``) with the shared test password."""
    from django.contrib.auth import get_user_model

    from curation.services.roles import grant

    user = get_user_model().objects.create_user(username, password=PASSWORD)
    grant(user, role)
    return user


def log_in(page, username: str, password: str = PASSWORD) -> None:
    """Log in through the real form, as a person would."""
    page.goto("/accounts/login/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(lambda url: "/accounts/login/" not in url)


def axe_violations(page, impacts: tuple[str, ...] = ("serious", "critical")) -> list[dict]:
    """axe-core's violations on the current page with the given impacts (id, impact, the nodes' targets)."""
    if not AXE.exists():
        raise RuntimeError(f"{AXE} is missing: run `make assets`")
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("async () => await axe.run(document)")
    return [{"id": v["id"], "impact": v["impact"], "help": v["help"],
             "targets": [n["target"] for n in v["nodes"]][:5]}
            for v in result["violations"] if v["impact"] in impacts]
