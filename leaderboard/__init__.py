"""The static leaderboard site: environments, their results records and standings (from scoring), job states and
validation summaries, rendered from this package's templates/ and static/ into a folder for GitHub Pages."""

from leaderboard.build import BuildResult, SiteOptions, build_site

__all__ = ["BuildResult", "SiteOptions", "build_site"]
