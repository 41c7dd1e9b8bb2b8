"""Import every task under the given folders as a new user would (one `arena import` each, with the options a source
without a licence or handle needs), static-check each package, and print the pass share and the reasons for the rest.

    .venv/bin/python bench/import_corpus.py FOLDER... [--github H --license SPDX] [--domain-when-asked D] [-v]

The README's figures for public corpora come from this script (the corpora themselves are not in the repository).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.import_corpus import import_and_check, summary, task_folders


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--github", default="corpus-importer", help="for an author the source names without one")
    parser.add_argument("--license", default="MIT", help="for a source that declares none")
    parser.add_argument("--domain-when-asked", metavar="DOMAIN",
                        help="import a task refused for its domain again with this --domain, as the refusal says")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per task")
    args = parser.parse_args()
    tasks = [task for folder in args.folders for task in task_folders(folder)]
    outcomes = []
    with tempfile.TemporaryDirectory() as out:
        for index, task in enumerate(tasks):
            started = time.perf_counter()
            outcome = import_and_check(task, Path(out) / str(index), args.domain_when_asked, github=args.github,
                                       license=args.license)
            outcomes.append(outcome)
            if args.verbose:
                seconds = time.perf_counter() - started
                print(f"{outcome.status:8} {seconds:5.1f} s  {task}  {'; '.join(outcome.reasons)}", flush=True)
    print("\n".join(summary(outcomes)))


if __name__ == "__main__":
    main()
