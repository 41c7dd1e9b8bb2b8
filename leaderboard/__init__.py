"""The static leaderboard site: bundled environments and their held-out results, rendered from site/ templates."""

from leaderboard.build import build_site
from leaderboard.results import Result, ResultsError, load_results

__all__ = ["Result", "ResultsError", "build_site", "load_results"]
