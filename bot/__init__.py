"""The arena's GitHub bot: event handlers as plain functions, and one thin module (github_api) that talks to GitHub."""
