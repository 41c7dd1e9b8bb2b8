"""The facts the bot fetches: a closed set (bot.facts.Fact), each fetched through one entry of bot.execute's table,
here against the GitHub stand-in."""

from __future__ import annotations

import pytest

from bot import github_api
from bot.actions import Need
from bot.execute import FETCHERS, Run, gather
from bot.facts import Config, Fact, Facts
from tests.support.github_standin import GitHubStandIn, fake_sha

REPO = "arena-org/arena"
FILES = ["environments/sample-task/task.md"]


def _run(hub: GitHubStandIn) -> Run:
    client = github_api.connect({"GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": hub.base_url, "GITHUB_TOKEN": hub.token,
                                 "ARENA_GITHUB_THROTTLE": "off", "ARENA_GITHUB_BACKOFF": "0.01"})
    return Run(client, Config(repo=REPO, bot_login=hub.bot_login), lambda *_, **__: None)


def test_every_fact_has_exactly_one_fetcher() -> None:
    assert set(FETCHERS) == set(Fact) and all(fact.value in Facts.__dataclass_fields__ for fact in Fact)


def test_each_need_fills_its_fact(hub: GitHubStandIn) -> None:
    number = hub.add_pull(REPO, author="alice", head_sha=fake_sha(1), files=FILES)
    hub.post_comment(REPO, number, "alice", "hello")
    hub.set_role(REPO, "alice", "write")
    run, facts = _run(hub), Facts()
    needs = [Need(Fact.PULL, (number,)), Need(Fact.FILES, (number,)), Need(Fact.COMMENTS, (number,)),
             Need(Fact.PERMISSION, ("alice",)), Need(Fact.AUTHOR_OPEN_PRS, ("alice",)), Need(Fact.REPORT)]
    for need in needs:
        gather(run, need, facts)
    assert facts.pull is not None and facts.pull.number == number and facts.files == FILES
    assert [c.body for c in facts.comments or []] == ["hello"]
    assert facts.permission == "write" and facts.author_open_prs == 1
    assert facts.report is None and "no report artifact" in (facts.report_error or "")  # none downloaded
    assert facts.fetched == {n.what for n in needs}
    assert Facts(fetched={Fact.PULL}).fetched == {"pull"}  # the values are the names they always were


def test_an_unknown_fact_is_refused(hub: GitHubStandIn) -> None:
    facts = Facts()
    with pytest.raises(ValueError, match="unknown fact 'weather'"):
        gather(_run(hub), Need("weather"), facts)  # a Need built from an unchecked string
    assert facts.fetched == set()
