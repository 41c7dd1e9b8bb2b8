"""The leaderboard in a real browser: Debian's Chromium driven by Playwright over a local HTTP server.

Sorting, filtering, the view kept in the URL across a reload, the server's rank order without JavaScript, rows of
later pages loaded for a sort, a phone-sized viewport with sticky rank and name columns, keyboard use, no console
error and no request leaving the site, hostile text rendered inert, and no serious or critical accessibility
violation on any page (axe-core, injected into each page, in the light and the dark colour scheme). Screenshots land
in test-artifacts/.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, expect

from leaderboard import SiteOptions, build_site
from leaderboard import build as build_module
from tests.support.site import BIDI, HOSTILE_NAME, sample_site_inputs, serve

pytestmark = pytest.mark.slow  # a real browser: seconds a test

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"  # package.json; scripts/setup runs npm ci


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    """Debian's Chromium (scripts/setup installs it); Playwright's own browser download cannot work here."""
    assert CHROMIUM.exists(), f"{CHROMIUM} is missing: run scripts/setup (apt-get install chromium)"
    return {**browser_type_launch_args, "executable_path": str(CHROMIUM), "args": ["--no-sandbox"]}


@pytest.fixture(scope="module")
def base_url_of_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("browser")
    inputs = sample_site_inputs(root, environments=40, records=100)
    build_site(out=root / "out", options=SiteOptions(repository="acme/arena"), **inputs)
    with serve(root / "out") as url:
        yield url


@pytest.fixture(scope="module")
def paged_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("paged")
    inputs = sample_site_inputs(root, environments=30, records=30)
    saved = build_module.PAGE_SIZE
    build_module.PAGE_SIZE = 8
    try:
        build_site(out=root / "out", **inputs)
    finally:
        build_module.PAGE_SIZE = saved
    with serve(root / "out") as url:
        yield url


class Watch:
    """Console errors, uncaught exceptions and every request a page makes."""

    def __init__(self, page: Page) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"uncaught: {exc}"))
        page.on("request", lambda request: self.requests.append(request.url))

    def _console(self, message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            self.errors.append(f"{message.type}: {message.text}")


def column(page: Page, key: str) -> list[str]:
    """The data-sort values of a column, in row order, visible rows only."""
    return page.eval_on_selector_all(
        "#board tbody tr:not([hidden])",
        """(rows, key) => {
             const index = [...document.querySelectorAll('#board thead th')].findIndex(th => th.dataset.key === key);
             return rows.map(row => row.cells[index].dataset.sort);
           }""", key)


def numbers_of(values: list[str]) -> list[float]:
    return [float(v) for v in values if v != ""]


# ----- without JavaScript ------------------------------------------------------------------------------------------
def test_without_javascript_the_server_order_is_the_rank(browser: Browser, base_url_of_site: str) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(base_url_of_site)
    ranks = [int(v) for v in column(page, "rank")]
    assert ranks == sorted(ranks) and len(ranks) > 10
    expect(page.locator("#controls")).to_be_hidden()
    assert page.locator("#board thead th button").count() == 0, "headers become buttons only with the script"
    context.close()


# ----- sorting, filtering, the URL ---------------------------------------------------------------------------------
def test_sorting_by_a_column_is_kept_in_the_url_and_restored_on_reload(page: Page, base_url_of_site: str) -> None:
    watch = Watch(page)
    page.goto(base_url_of_site)
    page.get_by_role("button", name="Δ points").click()
    deltas = numbers_of(column(page, "delta"))
    assert deltas == sorted(deltas, reverse=True), "a number column sorts largest first"
    assert parse_qs(urlsplit(page.url).query) == {"sort": ["delta"], "dir": ["desc"]}
    expect(page.locator("th[data-key=delta]")).to_have_attribute("aria-sort", "descending")
    page.get_by_role("button", name="Δ points").click()
    assert numbers_of(column(page, "delta")) == sorted(deltas)
    page.get_by_role("button", name="Environment").click()
    names = column(page, "name")
    assert names == sorted(names)
    page.reload()
    assert column(page, "name") == names
    expect(page.locator("th[data-key=name]")).to_have_attribute("aria-sort", "ascending")
    page.get_by_role("button", name="Fin", exact=True).click()
    finance = numbers_of(column(page, "d-finance"))
    assert finance == sorted(finance, reverse=True)
    assert watch.errors == []


def test_filters_by_domain_verdict_and_text_are_kept_in_the_url(page: Page, base_url_of_site: str) -> None:
    watch = Watch(page)
    page.goto(base_url_of_site)
    total = page.locator("#board tbody tr").count()
    page.get_by_label("Domain").select_option("finance")
    domains = page.eval_on_selector_all("#board tbody tr:not([hidden])", "rows => rows.map(r => r.dataset.domain)")
    assert domains and set(domains) == {"finance"} and len(domains) < total
    page.get_by_label("Verdict").select_option("improves")
    verdicts = page.eval_on_selector_all("#board tbody tr:not([hidden])", "rows => rows.map(r => r.dataset.verdict)")
    assert set(verdicts) <= {"improves"}
    page.get_by_label("Domain").select_option("")
    page.get_by_label("Verdict").select_option("")
    page.get_by_label("Search").fill(HOSTILE_NAME[:7])
    expect(page.locator("#board tbody tr:not([hidden])")).to_have_count(1)
    page.get_by_label("Domain").select_option("finance")
    query = parse_qs(urlsplit(page.url).query)
    assert query == {"q": [HOSTILE_NAME[:7]], "domain": ["finance"]}
    page.reload()
    expect(page.get_by_label("Search")).to_have_value(HOSTILE_NAME[:7])
    expect(page.get_by_label("Domain")).to_have_value("finance")
    expect(page.locator("#board tbody tr:not([hidden])")).to_have_count(1)
    expect(page.locator("#shown")).to_have_text(f"1 of {total} shown")
    page.get_by_role("button", name="Reset").click()
    expect(page.locator("#board tbody tr:not([hidden])")).to_have_count(total)
    assert urlsplit(page.url).query == ""
    assert watch.errors == []


def test_a_sort_loads_the_rows_of_every_page(page: Page, paged_site: str) -> None:
    watch = Watch(page)
    page.goto(paged_site)
    assert page.locator("#board tbody tr").count() == 8
    page.get_by_role("button", name="Δ points").click()
    expect(page.locator("#board tbody tr")).to_have_count(31)  # 30 sample environments and the hostile one
    deltas = numbers_of(column(page, "delta"))
    assert deltas == sorted(deltas, reverse=True)
    expect(page.locator(".pager")).to_be_hidden()
    hrefs = page.eval_on_selector_all("#board tbody a[href*='/e/']", "links => links.map(a => a.href)")
    assert hrefs and all(h.startswith(paged_site + "e/") for h in hrefs), "links from later pages still resolve"
    page.goto(paged_site + "page/2/?sort=name&dir=asc")
    expect(page.locator("#board tbody tr")).to_have_count(31)
    assert watch.errors == []


# ----- keyboard, phone ---------------------------------------------------------------------------------------------
def test_the_table_works_from_the_keyboard(page: Page, base_url_of_site: str) -> None:
    page.goto(base_url_of_site)
    page.keyboard.press("Tab")
    expect(page.locator(".skip")).to_be_focused()
    for _ in range(30):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.closest('th') && document.activeElement.closest('th').dataset.key")\
                == "name":
            break
    else:
        pytest.fail("the Environment column's sort button is not reachable with Tab")
    page.keyboard.press("Enter")
    names = column(page, "name")
    assert names == sorted(names)
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # the next column's button: Δ
    deltas = numbers_of(column(page, "delta"))
    assert deltas == sorted(deltas, reverse=True)


def test_on_a_phone_the_table_scrolls_with_rank_and_name_sticky(browser: Browser, base_url_of_site: str) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True,
                                  has_touch=True)
    page = context.new_page()
    page.goto(base_url_of_site)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, "the page itself never scrolls sideways"
    rank, name = page.locator("#board tbody tr").first.locator("td.c-rank"), page.locator(
        "#board tbody tr").first.locator("th.c-name")
    before = (rank.bounding_box(), name.bounding_box())
    wrap = page.locator(".table-wrap").first
    assert page.evaluate("el => el.scrollWidth > el.clientWidth", wrap.element_handle())
    wrap.evaluate("el => { el.scrollLeft = 500; }")
    after = (rank.bounding_box(), name.bounding_box())
    assert before[0] and before[1] and after[0] and after[1]
    assert (after[0]["x"], after[1]["x"]) == (before[0]["x"], before[1]["x"]), "rank and name stay put"
    assert before[0]["x"] + before[0]["width"] <= before[1]["x"] + 1, "the name column does not cover the rank"
    delta = page.locator("#board tbody tr").first.locator("td.c-delta").bounding_box()
    assert delta and delta["x"] < before[1]["x"], "the other columns scrolled under them"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "index-phone.png"))
    context.close()


# ----- nothing leaves the site, nothing breaks ---------------------------------------------------------------------
def test_no_page_logs_an_error_or_requests_anything_outside_the_site(browser: Browser, base_url_of_site: str) -> None:
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    watch = Watch(page)
    page.goto(base_url_of_site)
    environment = page.locator("#board tbody th.c-name a").first.get_attribute("href")
    paths = ["", "?sort=gain&dir=desc&verdict=improves", environment, f"e/{HOSTILE_NAME}/", "status/",
             "methodology/", "downloads/", "404.html"]
    for path in paths:
        page.goto(base_url_of_site + (path or ""))
        page.wait_for_load_state("networkidle")
    assert watch.errors == []
    outside = [url for url in watch.requests if not url.startswith(base_url_of_site)]
    assert outside == [] and len(watch.requests) > len(paths)
    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(base_url_of_site)
    page.screenshot(path=str(ARTIFACTS / "index.png"))
    page.goto(base_url_of_site + (environment or ""))
    page.screenshot(path=str(ARTIFACTS / "environment.png"), full_page=True)
    context.close()


def test_hostile_text_is_inert(page: Page, base_url_of_site: str) -> None:
    watch = Watch(page)
    for path in ["", f"e/{HOSTILE_NAME}/", "status/", f"?q={HOSTILE_NAME}"]:
        page.goto(base_url_of_site + path)
        assert page.evaluate("window.__pwned") is None
        assert page.locator("main img, main iframe, main script, main [onerror], main [onmouseover]").count() == 0
        hrefs = page.eval_on_selector_all("a[href]", "links => links.map(a => a.getAttribute('href'))")
        assert not [h for h in hrefs if h.strip().lower().startswith(("javascript:", "data:", "vbscript:"))]
    page.goto(base_url_of_site + f"e/{HOSTILE_NAME}/")
    title = page.locator(".env-title bdi")
    expect(title).to_contain_text("<script>window.__pwned = 1</script>")
    assert BIDI in title.inner_text(), "bidi controls stay inside their isolated element"
    expect(page.locator(".meta bdi", has_text="<b onmouseover=")).to_have_count(1)
    expect(page.locator(".task")).to_contain_text("<iframe")
    expect(page.locator(".task")).to_contain_text("[image: tracker]")
    expect(page.locator(".task a")).to_have_count(1)  # only the https link survives
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "huge strings wrap"
    assert watch.errors == []


# ----- accessibility -----------------------------------------------------------------------------------------------
AXE_RUN = """async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                      nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}));
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_page_has_a_serious_or_critical_accessibility_violation(browser: Browser, base_url_of_site: str,
                                                                   scheme: str) -> None:
    assert AXE.is_file(), f"{AXE} is missing: run scripts/setup (npm ci installs axe-core from package.json)"
    context = browser.new_context(viewport={"width": 1440, "height": 1000}, color_scheme=scheme, bypass_csp=True)
    page = context.new_page()
    page.goto(base_url_of_site)
    environment = page.locator("#board tbody th.c-name a").first.get_attribute("href")
    unranked = page.locator("#not-ranked ~ div tbody a").first.get_attribute("href")
    found = []
    for path in ["", "?sort=gain&dir=desc", environment, unranked, f"e/{HOSTILE_NAME}/", "status/", "methodology/",
                 "downloads/", "404.html"]:
        page.goto(base_url_of_site + (path or ""))
        page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
        found += [(path, v) for v in page.evaluate(AXE_RUN) if v["impact"] in ("serious", "critical")]
    context.close()
    assert found == [], "\n".join(f"{path or 'index'}: {v['impact']} {v['id']} ({v['help']}) at {v['nodes']}"
                                   for path, v in found)
