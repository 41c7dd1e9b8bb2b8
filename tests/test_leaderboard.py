"""The leaderboard site: results parsing, rendering with autoescaping, and the page as a browser shows it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.repo_commands import site_build
from leaderboard import ResultsError, build_site, load_results
from leaderboard.build import load_environments

ROOT = Path(__file__).resolve().parent.parent
ENVIRONMENTS = ROOT / "environments"
CHROMIUM = Path("/usr/bin/chromium")
BUNDLED = sorted(p.name for p in ENVIRONMENTS.iterdir() if (p / "task.md").is_file())


def result(environment: str, domains: dict[str, tuple[float, float]], **extra: object) -> dict:
    return {"results_version": 1, "environment": environment, "model": "Qwen/Qwen3-8B", "evaluated_at": "2026-11-30",
            "domains": {d: {"base": b, "trained": t} for d, (b, t) in domains.items()}, **extra}


def write_results(folder: Path, *results: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for data in results:
        (folder / f"{data['environment']}.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


# ----- results -----------------------------------------------------------------------------------------------------
def test_results_are_ranked_by_mean_improvement_over_domains(tmp_path: Path) -> None:
    folder = write_results(tmp_path / "results",
                           result("ledger-reconciliation", {"finance": (0.4, 0.5), "healthcare": (0.3, 0.3)}),
                           result("shift-scheduling", {"math-planning": (0.2, 0.3), "finance": (0.5, 0.6)}),
                           result("refund-desk", {"customer-operations": (0.5, 0.45)}))
    ranked = load_results(folder)
    assert [r.environment for r in ranked] == ["shift-scheduling", "ledger-reconciliation", "refund-desk"]
    assert ranked[0].improvement == pytest.approx(0.1)
    assert ranked[1].base == pytest.approx(0.35) and ranked[1].trained == pytest.approx(0.4)
    assert ranked[2].improvement == pytest.approx(-0.05)


def test_no_results_folder_means_no_results(tmp_path: Path) -> None:
    assert load_results(tmp_path / "absent") == [] and load_results(None) == []


@pytest.mark.parametrize(("data", "message"), [
    (result("foo-bar", {"finance": (0.4, 1.5)}), "domains/finance/trained"),
    (result("foo-bar", {"cooking": (0.4, 0.5)}), "not arena domains: cooking"),
    (result("foo-bar", {}), "domains"),
    ({**result("foo-bar", {"finance": (0.4, 0.5)}), "extra": 1}, "extra"),
    ({**result("foo-bar", {"finance": (0.4, 0.5)}), "results_version": 2}, "results_version"),
    (result("other-env", {"finance": (0.4, 0.5)}), "file is named foo-bar.json"),
    ([1, 2], "(top level)"),
])
def test_invalid_results_name_the_file_and_the_field(tmp_path: Path, data: object, message: str) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "foo-bar.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ResultsError, match=r"foo-bar\.json") as caught:
        load_results(folder)
    assert message in str(caught.value)


def test_results_that_are_not_json_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "foo-bar.json").write_bytes(b"\xff{")
    with pytest.raises(ResultsError, match="not UTF-8 JSON"):
        load_results(folder)


# ----- the page ----------------------------------------------------------------------------------------------------
def test_every_bundled_environment_is_listed_with_its_metadata(tmp_path: Path) -> None:
    index = build_site(ENVIRONMENTS, None, tmp_path / "site")
    html = index.read_text(encoding="utf-8")
    packages, broken = load_environments(ENVIRONMENTS)
    assert [p.name for p in packages] == BUNDLED and broken == []
    for package in packages:
        assert f'data-environment="{package.name}"' in html
        for text in (package.title, package.domain, str(package.instance_count), package.authors[0].github):
            assert text.replace("'", "&#39;") in html
    assert "No results yet" in html
    assert (tmp_path / "site" / "static" / "style.css").is_file()


def test_results_are_shown_best_first_with_signed_improvements(tmp_path: Path) -> None:
    folder = write_results(tmp_path / "results",
                           result("ledger-reconciliation", {"finance": (0.41, 0.47)}),
                           result("refund-desk", {"customer-operations": (0.5, 0.45)}))
    html = build_site(ENVIRONMENTS, folder, tmp_path / "site").read_text(encoding="utf-8")
    assert "No results yet" not in html
    first, second = html.index('class="result" data-environment="ledger-reconciliation"'), html.index(
        'class="result" data-environment="refund-desk"')
    assert first < second
    assert "+6.0" in html and "-5.0" in html


def test_untrusted_text_is_escaped(tmp_path: Path) -> None:
    envs = tmp_path / "environments"
    shutil.copytree(ENVIRONMENTS / BUNDLED[0], envs / BUNDLED[0])
    task = envs / BUNDLED[0] / "task.md"
    text = task.read_text(encoding="utf-8")
    title_line = next(line for line in text.splitlines() if line.startswith("title:"))
    task.write_text(text.replace(title_line, "title: \"<script>alert(1)</script> & <b>bold</b>\""), encoding="utf-8")
    folder = write_results(tmp_path / "results",
                           result(BUNDLED[0], {"finance": (0.1, 0.2)}, model="<img src=x onerror=alert(1)>"))
    html = build_site(envs, folder, tmp_path / "site").read_text(encoding="utf-8")
    assert "<script>alert" not in html and "<img src=x" not in html and "<b>bold" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_a_package_that_does_not_load_is_named_not_listed(tmp_path: Path) -> None:
    envs = tmp_path / "environments"
    shutil.copytree(ENVIRONMENTS / BUNDLED[0], envs / BUNDLED[0])
    (envs / "broken-env").mkdir()
    (envs / "broken-env" / "task.md").write_text("no frontmatter\n", encoding="utf-8")
    html = build_site(envs, None, tmp_path / "site").read_text(encoding="utf-8")
    assert 'data-environment="broken-env"' not in html and "<code>broken-env</code>" in html
    assert "Environments (1)" in html


def test_site_folder_holds_no_python() -> None:
    assert not list((ROOT / "site").rglob("*.py")), "site/ is data only: `site` is a standard-library module name"


def test_arena_site_build(tmp_path: Path) -> None:
    folder = write_results(tmp_path / "results", result("refund-desk", {"customer-operations": (0.5, 0.6)}))
    out = tmp_path / "_site"
    done = CliRunner().invoke(site_build, ["--out", str(out), "--environments", str(ENVIRONMENTS),
                                           "--results", str(folder)])
    assert done.exit_code == 0, done.output
    assert (out / "index.html").is_file() and 'data-environment="refund-desk"' in (out / "index.html").read_text()


def test_arena_site_build_refuses_bad_results(tmp_path: Path) -> None:
    folder = write_results(tmp_path / "results", result("refund-desk", {"cooking": (0.5, 0.6)}))
    done = CliRunner().invoke(site_build, ["--out", str(tmp_path / "_site"), "--environments", str(ENVIRONMENTS),
                                           "--results", str(folder)])
    assert done.exit_code == 1 and "not arena domains: cooking" in done.output


# ----- in a browser ------------------------------------------------------------------------------------------------
def chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--no-first-run", f"--user-data-dir={profile}"]
    return subprocess.run([str(CHROMIUM), *flags, *args], capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install chromium)")
def test_the_page_renders_in_headless_chromium(tmp_path: Path) -> None:
    folder = write_results(tmp_path / "results",
                           result("ledger-reconciliation", {"finance": (0.41, 0.47), "healthcare": (0.3, 0.31)}))
    index = build_site(ENVIRONMENTS, folder, tmp_path / "site")
    done = chromium(tmp_path / "profile", "--dump-dom", index.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert "<h1>PostTrain Arena</h1>" in dom and "Leaderboard" in dom
    for name in BUNDLED:
        assert f'data-environment="{name}"' in dom
    assert 'class="num improvement up">+3.5<' in dom
    shot = tmp_path / "page.png"
    done = chromium(tmp_path / "profile", "--window-size=1280,900", f"--screenshot={shot}", index.as_uri())
    assert done.returncode == 0 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
