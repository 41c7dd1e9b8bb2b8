"""Benchmark: `arena site build` at scale against a bare Jinja loop, an unchanged rebuild, and the index's size.

Sample inputs (leaderboard.sample_data): --environments environments (nine in ten with a package) and --records
results records. Measured in one run, on the same cores:

- full build: hashing the inputs, reading them (scoring.verify.load_checked, which recomputes every record's numbers
  from its items file, and standings; taskpkg.load_package for every package; job states) and rendering every page
  through the incremental writer (view digests, manifest);
- bare loop: the same templates rendering the same pages from the already-parsed catalog, every file simply written;
- unchanged rebuild: `build_site` again on the same inputs and output;
- the first index page's gzip size (rows past leaderboard.build.PAGE_SIZE go on further pages, loaded on demand).

Prints the times and the ratios (targets: full build at most 2x the bare loop; unchanged rebuild at most 10% of a
full build; index under 300 KB compressed).

    .venv/bin/python bench/site_build.py [--environments 10000] [--records 50000]
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from leaderboard.build import (
    PAGE_SIZE,
    SiteOptions,
    SiteRenderer,
    build_site,
    inputs_digest,
    render_site,
    template_environment,
)
from leaderboard.catalog import load_catalog
from leaderboard.sample_data import write_sample_set


class BareWriter:
    """Writes every file it is given: no digests, no manifest, no comparison with an earlier build."""

    def __init__(self, out: Path) -> None:
        self.out = out

    def put(self, path: str, data: bytes, source: str | None = None) -> None:
        target = self.out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def page(self, path: str, view: object, render: Callable[[], bytes], salt: str = "") -> None:
        self.put(path, render())


def timed(work: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    result = work()
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--environments", type=int, default=10_000)
    parser.add_argument("--records", type=int, default=50_000)
    args = parser.parse_args()
    options = SiteOptions(repository="acme/arena")
    with tempfile.TemporaryDirectory(prefix="arena-bench-site-") as temp:
        root = Path(temp)
        seconds, sample = timed(lambda: write_sample_set(root / "inputs", args.environments, args.records, jobs=50))
        print(f"generated {args.environments:,} environments and {args.records:,} records in {seconds:.1f} s",
              flush=True)
        dirs = (sample.results_dir, sample.environments_dir, sample.jobs_dir, None)

        for template in ("index.html.j2", "environment.html.j2", "status.html.j2", "methodology.html.j2"):
            template_environment().get_template(template)  # compile once, outside both timings
        t_digest, inputs = timed(lambda: inputs_digest(dirs, options))
        marks: list[tuple[str, float]] = [("start", time.perf_counter())]
        t_load, catalog = timed(lambda: load_catalog(sample.environments_dir, sample.results_dir, sample.jobs_dir,
                                                     progress=lambda line: marks.append((line, time.perf_counter()))))
        print(f"inputs hashed in {t_digest:.1f} s, read in {t_load:.1f} s:", flush=True)
        for (_, before), (line, after) in itertools.pairwise(marks):
            print(f"  {after - before:7.1f} s  {line}", flush=True)
        t_render, stats = timed(lambda: render_site(catalog, root / "site", inputs, options, {}))
        t_full = t_digest + t_load + t_render
        print(f"full build: {t_full:.1f} s ({stats.written:,} files: hash {t_digest:.1f} s + read {t_load:.1f} s "
              f"+ render {t_render:.1f} s)", flush=True)

        bare = root / "bare"
        t_bare, _ = timed(lambda: SiteRenderer(catalog, options, BareWriter(bare)).pages())
        print(f"bare Jinja loop over the parsed catalog: {t_bare:.1f} s", flush=True)

        t_again, again = timed(lambda: build_site(sample.environments_dir, sample.results_dir, root / "site",
                                                  jobs_dir=sample.jobs_dir, options=options))
        assert again.unchanged, "the rebuild should have found nothing to do"
        print(f"unchanged rebuild: {t_again:.2f} s", flush=True)

        index = (root / "site" / "index.html").read_bytes()
        packed = len(gzip.compress(index, 9))
        pages = len(list((root / "site").glob("page/*/index.html"))) + 1

    print()
    print(f"full build / bare loop:          {t_full / t_bare:5.2f}x  (target <= 2x)")
    print(f"  rendering alone / bare loop:   {t_render / t_bare:5.2f}x  (the incremental writer's own cost)")
    print(f"  reading inputs / bare loop:    {t_load / t_bare:5.2f}x  (scoring's records, taskpkg's packages)")
    print(f"unchanged rebuild / full build:  {t_again / t_full:5.1%}  (target <= 10%)")
    print(f"index page: {len(index) / 1024:,.0f} KB, {packed / 1024:,.0f} KB gzip, {PAGE_SIZE} of "
          f"{len(catalog.primary.current) if catalog.primary else 0:,} rows, {pages} pages  (target < 300 KB gzip)")


if __name__ == "__main__":
    main()
