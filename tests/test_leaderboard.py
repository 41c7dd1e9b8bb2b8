"""The leaderboard site's build: pages from records and standings, downloads against their schema, safe Markdown,
job and report input as untrusted data, reproducible and incremental output, the methodology in step with the code,
and `arena site build`. The pages in a real browser: tests/test_site_browser.py."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import statistics
from pathlib import Path

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator
from scipy import stats

from arena.repo_commands import site_build
from leaderboard import SiteOptions, build_site
from leaderboard import build as build_module
from leaderboard.catalog import load_catalog
from leaderboard.downloads import leaderboard_schema_text
from leaderboard.methodology import COVERAGE, FALSE_DISCOVERY_RATE, MAX_DOMAIN_SHARE
from leaderboard.output import MANIFEST
from leaderboard.sample_data import sample_record, write_run_files, write_sample_set
from leaderboard.social_image import packaged_png, social_png
from leaderboard.task_html import safe_href, task_html
from leaderboard.views import HEAT_STEPS
from scoring.verify import load_records
from taskpkg.domains import DOMAINS
from tests.support.site import HOSTILE_NAME, sample_site_inputs

ROOT = Path(__file__).resolve().parent.parent
ENVIRONMENTS = ROOT / "environments"
BUNDLED = sorted(p.name for p in ENVIRONMENTS.iterdir() if (p / "task.md").is_file())


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return sample_site_inputs(tmp_path_factory.mktemp("inputs"))


@pytest.fixture(scope="module")
def site(inputs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "out"
    build_site(out=out, options=SiteOptions(repository="acme/arena"), **inputs)
    return out


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def index_rows(html: str) -> list[tuple[str, str]]:
    """(environment, rank text) of each row of an index page, in page order."""
    return re.findall(r'<td class="c-rank" data-sort="\d+"><span class="rank">([^<]*)</span>.*?'
                      r'<a href="(?:\.\./)*e/([a-z0-9-]+)/">', html, re.S)


# ----- pages -------------------------------------------------------------------------------------------------------
def test_the_index_lists_the_current_runs_in_rank_order_with_their_numbers(site: Path, inputs: dict) -> None:
    catalog = load_catalog(inputs["environments_dir"], inputs["results_dir"])
    group = catalog.primary
    assert group is not None
    html = (site / "index.html").read_text(encoding="utf-8")
    rows = index_rows(html)
    assert [name for _, name in rows] == [e.record.environment for e in group.current]
    ranks = [e.standing.rank for e in group.current]
    ranked = [r for r in ranks if r is not None]
    assert ranked == sorted(ranked) and ranks[:len(ranked)] == ranked, "ranked rows first, in rank order"
    first = group.current[0].record
    assert f"{first.macro_delta * 100:+.1f}".replace("-", "−") in html
    assert html.count('class="heat h') == len(DOMAINS) * len(group.current)
    assert all(e.standing.rank is not None and e.standing.reason is None for e in group.current)
    assert all(e.standing.rank_interval[0] <= e.standing.rank <= e.standing.rank_interval[1] for e in group.current)
    assert "https://github.com/acme/arena/pull/" in html


def test_flagged_and_incomplete_runs_are_listed_apart_never_with_a_rank(site: Path, inputs: dict) -> None:
    catalog = load_catalog(inputs["environments_dir"], inputs["results_dir"])
    group = catalog.primary
    assert group is not None
    reasons = {e.record.environment: e.standing.reason for e in group.unranked}
    assert set(reasons.values()) >= {"flagged", "incomplete"}, reasons  # the sample data holds both
    assert all(e.standing.rank is None and e.standing.rank_interval is None for e in group.unranked)
    html = (site / "index.html").read_text(encoding="utf-8")
    board, _, apart = html.partition('id="not-ranked"')
    listed = re.findall(r'<tr data-reason="([a-z]+)"><th scope="row"><a href="e/([a-z0-9-]+)/">', apart)
    assert dict((name, reason) for reason, name in listed) == reasons
    assert all(f'href="e/{name}/"' not in board.partition("<tbody>")[2] for name in reasons), "never in the table"
    flagged = next(name for name, reason in reasons.items() if reason == "flagged")
    page = (site / "e" / flagged / "index.html").read_text(encoding="utf-8")
    assert "not ranked" in page and "contamination gate found overlap" in page


def test_every_environment_has_a_page_and_scored_ones_their_data(site: Path, inputs: dict) -> None:
    catalog = load_catalog(inputs["environments_dir"], inputs["results_dir"])
    for name in catalog.environment_names():
        page = (site / "e" / name / "index.html").read_text(encoding="utf-8")
        data = json.loads((site / "e" / name / "results.json").read_text(encoding="utf-8"))
        assert data["environment"] == name and len(data["runs"]) == len(catalog.entries.get(name, []))
        if name in catalog.entries:
            assert "History across commits" in page and page.count('<tr id="run-') == len(catalog.entries[name])
        else:
            assert "Not yet scored" in page
    scored = next(n for n in catalog.entries if n in catalog.packages and catalog.entries[n][0].record.reward_curve)
    page = (site / "e" / scored / "index.html").read_text(encoding="utf-8")
    assert '<polyline class="line"' in page and "Per-domain results" in page and "Run manifest" in page
    assert catalog.entries[scored][0].record.run_id in page


def test_the_queue_lists_pending_jobs_and_unscored_environments(site: Path, inputs: dict) -> None:
    catalog = load_catalog(inputs["environments_dir"], inputs["results_dir"], inputs["jobs_dir"])
    html = (site / "status" / "index.html").read_text(encoding="utf-8")
    active = [j for j in catalog.jobs if j.active]
    assert active and f"Pending jobs ({len(active)})" in html
    assert f"not yet scored ({len(catalog.unscored())})" in html
    for package in catalog.unscored():
        assert f'e/{package.name}/"' in html
    assert "x&#34;&gt;&lt;img" in html, "the broken package's folder name is listed as text"


def test_validation_summaries_come_from_the_reports(site: Path, inputs: dict) -> None:
    report = json.loads((inputs["reports_dir"] / "check.json").read_text())["packages"][0]
    page = (site / "e" / report["name"] / "index.html").read_text(encoding="utf-8")
    assert "2 of 3 checks passed" in page and "3.2" in page and "1 warned" in page
    other = next(p for p in (site / "e").iterdir() if p.name != report["name"])
    assert "No validation report was given to this build." in (other / "index.html").read_text(encoding="utf-8")


# ----- downloads ---------------------------------------------------------------------------------------------------
def test_downloads_follow_the_published_schema(site: Path) -> None:
    schema = json.loads(leaderboard_schema_text())
    validator = Draft202012Validator(schema)
    board = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))
    documents = [board, *(json.loads(p.read_text()) for p in (site / "history").glob("*.json")),
                 *(json.loads(p.read_text()) for p in sorted((site / "e").glob("*/results.json"))[:10])]
    for document in documents:
        errors = [e.message for e in validator.iter_errors(document)]
        assert not errors, errors[:3]
    assert json.loads((site / "schema" / "leaderboard-v1.schema.json").read_text()) == schema
    assert list(validator.iter_errors({**board, "entries": [{"rank": "first"}]})), "the schema can fail"
    rows = list(csv.DictReader(io.StringIO((site / "leaderboard.csv").read_text(encoding="utf-8"))))
    assert [r["environment"] for r in rows] == [e["environment"] for e in board["entries"]]
    assert {r["rank"] for r in rows} == {"" if e["rank"] is None else str(e["rank"]) for e in board["entries"]}


def test_a_history_snapshot_per_suite_version(tmp_path: Path) -> None:
    sample = write_sample_set(tmp_path, 4, 4, packages=False)
    import random

    record, items = sample_record(sample.environments[0], random.Random(1), when="2027-01-01T00:00:00Z",
                                  suite_version="2.0.0")
    write_run_files(sample.results_dir, record, items)
    build_site(None, sample.results_dir, tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out" / "history").iterdir()) == ["1.2.0.json", "2.0.0.json"]
    board = json.loads((tmp_path / "out" / "leaderboard.json").read_text())
    assert [g["suite_version"] for g in board["groups"]] == ["2.0.0", "1.2.0"], "the newest group first"
    index = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert "Ranked separately" not in index and "arena-heldout 1.2.0" in index
    other = board["groups"][1]["slug"]
    assert "Ranked separately" in (tmp_path / "out" / "g" / other / "index.html").read_text(encoding="utf-8")


def test_version_1_results_are_still_read(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    (results / "refund-desk.json").write_text(json.dumps({
        "results_version": 1, "environment": "refund-desk", "model": "Qwen/Qwen3-8B", "evaluated_at": "2026-11-30",
        "domains": {"customer-operations": {"base": 0.5, "trained": 0.56}}}))
    build_site(ENVIRONMENTS, results, tmp_path / "out")
    page = (tmp_path / "out" / "e" / "refund-desk" / "index.html").read_text(encoding="utf-8")
    assert "+6.0" in page and (tmp_path / "out" / "history" / "unversioned.json").is_file()


# ----- untrusted text ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("href", "safe"), [
    ("https://example.com", True), ("http://x.y/z", True), ("mailto:a@b.c", True), ("#section", True),
    ("javascript:alert(1)", False), (" JaVaScRiPt:alert(1)", False), ("data:text/html,x", False),
    ("vbscript:x", False), ("file:///etc/passwd", False), ("//evil.example/x", False), ("relative/path", False),
])
def test_only_web_mail_and_in_page_links_survive(href: str, safe: bool) -> None:
    assert safe_href(href) is safe
    html = task_html(f"[text]({href.strip()})")
    assert ("<a href=" in html) is safe and "text" in html


def test_task_markdown_keeps_its_structure_and_drops_markup() -> None:
    html = task_html("## Rules\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n<script>x()</script>\n\n"
                     '<img src=x onerror=y()> ![alt text](https://tracker.example/p.png) `code`\n')
    assert "<h2>Rules</h2>" in html and "<li>one</li>" in html and "<table>" in html and "<code>code</code>" in html
    assert "<script" not in html and "<img" not in html and "&lt;script&gt;" in html
    assert "[image: alt text]" in html and "tracker.example" not in html


def test_hostile_text_is_escaped_everywhere(site: Path) -> None:
    for path in site.rglob("*.html"):
        html = path.read_text(encoding="utf-8")
        assert "window.__pwned = 1</script>" not in html and "<img" not in html and "<iframe" not in html, path
        assert "javascript:" not in html.replace("javascript:window.__pwned=1)", ""), path
        assert "built-in method" not in html and " object at 0x" not in html, f"{path}: a Python repr leaked"
    page = (site / "e" / HOSTILE_NAME / "index.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in page
    assert "<bdi>&lt;b onmouseover=" in page, "the author's name is isolated text"


# ----- jobs and reports as untrusted data --------------------------------------------------------------------------
def test_bad_job_and_report_files_are_skipped_with_a_warning_naming_them(tmp_path: Path) -> None:
    sample = write_sample_set(tmp_path, 3, 3, packages=False, jobs=2)
    assert sample.jobs_dir is not None
    name = sample.environments[0]
    bad = {
        "state.json": {"job_version": 1, "environment": name, "commit": "a" * 40, "state": "exploded",
                       "backend": "local", "requested_by": "x", "requested_at": "2026-01-01T00:00:00Z",
                       "updated_at": "2026-01-01T00:00:00Z"},
        f"{'b' * 40}.json": {"job_version": 1, "environment": "other-env", "commit": "b" * 40, "state": "queued",
                             "backend": "local", "requested_by": "x", "requested_at": "2026-01-01T00:00:00Z",
                             "updated_at": "2026-01-01T00:00:00Z"},
        "list.json": [1, 2],
    }
    for file, data in bad.items():
        (sample.jobs_dir / name / file).write_text(json.dumps(data))
    (sample.jobs_dir / name / "binary.json").write_bytes(b"\xff\xfe")
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "old.json").write_text(json.dumps({"report_version": 9}))
    built = build_site(None, sample.results_dir, tmp_path / "out", jobs_dir=sample.jobs_dir, reports_dir=reports)
    text = "\n".join(built.warnings)
    assert "state.json: skipped: state" in text and "is filed elsewhere" in text
    assert "list.json: skipped: expected a JSON object" in text and "binary.json: skipped: not UTF-8 JSON" in text
    assert "old.json: skipped: report_version" in text
    assert len(built.warnings) == 5


# ----- reproducible and incremental --------------------------------------------------------------------------------
def test_the_same_inputs_give_the_same_bytes(site: Path, inputs: dict, tmp_path: Path) -> None:
    copy = tmp_path / "inputs"
    for folder in inputs.values():
        shutil.copytree(folder, copy / folder.name)
    build_site(out=tmp_path / "again", options=SiteOptions(repository="acme/arena"),
               **{key: copy / folder.name for key, folder in inputs.items()})
    assert files_of(tmp_path / "again") == files_of(site)


def test_an_unchanged_rebuild_writes_nothing_and_a_change_rewrites_only_what_it_touches(tmp_path: Path) -> None:
    sample = write_sample_set(tmp_path, 12, 20)
    out = tmp_path / "out"
    first = build_site(sample.environments_dir, sample.results_dir, out)
    assert not first.unchanged and first.stats.written == first.stats.total
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    again = build_site(sample.environments_dir, sample.results_dir, out)
    assert again.unchanged and again.stats.written == 0
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()} == before

    package = sample.environments_dir / sample.environments[0] / "task.md"  # a package's text changes
    package.write_text(package.read_text().replace("Do not modify", "Never modify"))
    changed = build_site(sample.environments_dir, sample.results_dir, out)
    assert not changed.unchanged
    assert changed.stats.written == 1, "only that environment's page"
    page = out / "e" / sample.environments[0] / "index.html"
    assert "Never modify" in page.read_text()
    assert all(p.stat().st_mtime_ns == t for p, t in before.items() if p not in (page, out / MANIFEST))

    shutil.rmtree(sample.environments_dir / sample.environments[1])  # a package is removed, its results stay
    shutil.rmtree(sample.results_dir / sample.environments[1])  # ... and then its results too
    removed = build_site(sample.environments_dir, sample.results_dir, out)
    assert removed.stats.removed == 2 and not (out / "e" / sample.environments[1]).exists()


def test_a_manifest_never_removes_files_outside_the_site(tmp_path: Path) -> None:
    outside = tmp_path / "precious.txt"
    outside.write_text("keep")
    out = tmp_path / "out"
    out.mkdir()
    (out / MANIFEST).write_text(json.dumps({"manifest_version": 1, "inputs": "x", "files": {
        "../precious.txt": {"source": "s", "output": "o"}}}))
    build_site(None, None, out)
    assert outside.read_text() == "keep"


def test_past_a_page_of_rows_the_index_is_paginated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build_module, "PAGE_SIZE", 5)
    sample = write_sample_set(tmp_path, 12, 12, packages=False)
    build_site(None, sample.results_dir, tmp_path / "out")
    pages = [tmp_path / "out" / "index.html", *sorted((tmp_path / "out" / "page").glob("*/index.html"))]
    assert len(pages) == 3
    names = [name for page in pages for _, name in index_rows(page.read_text(encoding="utf-8"))]
    assert sorted(names) == sorted(sample.environments)
    assert 'rel="next" href="page/2/"' in pages[0].read_text() and 'href="../../"' in pages[1].read_text()


# ----- the methodology page states the numbers the code uses -------------------------------------------------------
def test_the_methodology_page_states_the_numbers_the_code_uses(site: Path, inputs: dict) -> None:
    html = (site / "methodology" / "index.html").read_text(encoding="utf-8")
    facts = dict.fromkeys(("domain", "resamples", "confidence", "heat-step", "max-share", "fdr", "domain-count",
                           "mde", "coverage", "retries"))
    for key in facts:
        facts[key] = re.findall(rf'data-fact="{key}">([^<]+)<', html)
    assert facts["domain"] == list(DOMAINS) and facts["domain-count"] == [str(len(DOMAINS))]
    records = load_records(inputs["results_dir"])
    used = {(r.raw["statistics"]["resamples"], r.raw["statistics"]["confidence"]) for r in records}
    assert {(int(n.replace(",", "")), float(c.rstrip("%")) / 100) for n, c in zip(
        facts["resamples"], facts["confidence"], strict=True)} == used
    assert facts["max-share"] == [f"{MAX_DOMAIN_SHARE:.0%}"] and facts["fdr"] == [f"{FALSE_DISCOVERY_RATE:.0%}"]
    assert facts["heat-step"] == [f"+{step * 100:.1f}" for step in HEAT_STEPS]
    assert facts["coverage"] == list(COVERAGE.values()) and facts["retries"] == ["2"]
    current = [r for r in records if r.suite_version == "1.2.0"]
    se, df = statistics.median(r.macro_se for r in current), statistics.median(r.macro_df for r in current)
    mde = (stats.t.ppf(0.975, df) + stats.t.ppf(0.8, df)) * se  # scipy's t, not the page's own
    assert facts["mde"] == [f"{mde * 100:.1f}"]
    for record in records:  # every suite the runs used keeps the domain cap the page states
        total = sum(d.items or 0 for d in record.domains)
        assert all((d.items or 0) / total <= MAX_DOMAIN_SHARE for d in record.domains if record.version == 2)


# ----- assets ------------------------------------------------------------------------------------------------------
def test_the_social_image_is_the_one_the_code_draws(site: Path) -> None:
    assert packaged_png() == social_png(), "redraw it: python -m leaderboard.social_image"
    assert (site / "static" / "social.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (site / "static" / "favicon.svg").read_text().startswith("<svg")


def test_site_folder_holds_no_python() -> None:
    assert not list((ROOT / "site").rglob("*.py")), "site/ is data only: `site` is a standard-library module name"


# ----- arena site build --------------------------------------------------------------------------------------------
def test_arena_site_build_works_from_any_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sample = write_sample_set(tmp_path / "data", 3, 5, packages=False, jobs=3)
    monkeypatch.chdir(tmp_path)  # no checkout here: templates come from the installed package
    out = tmp_path / "_site"
    done = CliRunner().invoke(site_build, ["--out", str(out), "--environments", str(ENVIRONMENTS), "--results",
                                           str(sample.results_dir), "--jobs", str(sample.jobs_dir),
                                           "--repository", "acme/arena"])
    assert done.exit_code == 0, done.output
    html = (out / "index.html").read_text(encoding="utf-8")
    assert all(f'e/{name}/"' in html for name in sample.environments)
    assert all((out / "e" / name / "index.html").is_file() for name in BUNDLED)
    assert "site: " in done.output and "files written" in done.output


def test_arena_site_build_names_a_bad_results_file(tmp_path: Path) -> None:
    sample = write_sample_set(tmp_path, 2, 2, packages=False)
    bad = next(p for p in sample.results_dir.rglob("*.json") if not p.name.endswith(".items.json"))
    data = json.loads(bad.read_text())
    data["domains"]["cooking"] = data["domains"]["finance"]
    bad.write_text(json.dumps(data))
    done = CliRunner().invoke(site_build, ["--out", str(tmp_path / "_site"), "--results", str(sample.results_dir),
                                           "--environments", str(tmp_path / "none")])
    assert done.exit_code == 1 and bad.name in done.output and "cooking" in done.output
    assert not (tmp_path / "_site" / "index.html").exists()


@pytest.mark.parametrize(("field", "forge"), [
    ("macro/p_value", lambda d: d["macro"].update(p_value=0.0001)),
    ("macro/interval/0", lambda d: d["macro"]["interval"].__setitem__(0, d["macro"]["interval"][0] - 0.01)),
    ("verdict", lambda d: d.update(verdict="improves" if d["verdict"] != "improves" else "hurts")),
    ("domains/finance/interval/1", lambda d: d["domains"]["finance"]["interval"].__setitem__(1, 0.5)),
])
def test_arena_site_build_refuses_a_record_whose_numbers_its_items_do_not_give(tmp_path: Path, field: str,
                                                                                forge: callable) -> None:
    sample = write_sample_set(tmp_path, 2, 2, packages=False)
    forged = next(p for p in sample.results_dir.rglob("*.json") if not p.name.endswith(".items.json"))
    data = json.loads(forged.read_text())
    forge(data)
    forged.write_text(json.dumps(data))
    done = CliRunner().invoke(site_build, ["--out", str(tmp_path / "_site"), "--results", str(sample.results_dir),
                                           "--environments", str(tmp_path / "none")])
    assert done.exit_code == 1 and f"{forged.name}: {field}: the record says" in done.output
    assert "its items file gives" in done.output and not (tmp_path / "_site" / "index.html").exists()


def test_arena_site_build_refuses_a_record_without_its_items(tmp_path: Path) -> None:
    sample = write_sample_set(tmp_path, 2, 2, packages=False)
    next(sample.results_dir.rglob("*.items.json")).unlink()
    done = CliRunner().invoke(site_build, ["--out", str(tmp_path / "_site"), "--results", str(sample.results_dir)])
    assert done.exit_code == 1 and "no items file: a version-2 record is accepted only with its" in done.output


def test_an_empty_repository_still_builds(tmp_path: Path) -> None:
    built = build_site(tmp_path / "none", tmp_path / "none", tmp_path / "out")
    html = built.index.read_text(encoding="utf-8")
    assert "No environment has been post-trained and scored yet" in html
    assert os.path.isfile(tmp_path / "out" / "leaderboard.json")
