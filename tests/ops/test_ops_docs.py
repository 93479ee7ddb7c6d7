"""docs/ops: every metric the alert rules and the Grafana dashboard name is one the service
exposes. The app is exercised first (a request, a buy through the approval, a scrape), then the
names in every expression are compared with the metric families of a scrape; names differing
only by Prometheus's suffixes (``_total``, ``_bucket``, ``_sum``, ``_count``) count as theirs.
Every alert links its runbook (docs/ops/runbooks/, one page per alert) and every runbook is an
alert's."""

import json
import re
from pathlib import Path

import pytest
import yaml
from django.conf import settings

from tests.eager import _eager_celery
from tests.factories import trade_url
from tests.ops.metrics import parsed
from tests.withdrawals.conftest import alice_funded, catalog_item, hooks, make_listing

__all__ = ["_eager_celery", "alice_funded", "catalog_item", "hooks"]

OPS = Path(settings.BASE_DIR) / "docs" / "ops"
RUNBOOKS = OPS / "runbooks"
METRIC = re.compile(r"\btrading_[a-z0-9_]+")
# Prometheus's own series of each scrape: 1 when the target answered, 0 when it did not.
SCRAPED = 'up{job="trading"}'
# What each runbook page says, in this order.
SECTIONS = ("## What it means", "## How to look", "## How to fix")
SUFFIXES = {
    "counter": ("_total", "_created"),
    "histogram": ("_bucket", "_sum", "_count", "_created"),
    "gauge": ("",),
}


def alert_rules() -> list[dict]:
    rules = yaml.safe_load((OPS / "alerts.yml").read_text())
    found = []
    for group in rules["groups"]:
        for rule in group["rules"]:
            assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}, rule
            assert rule["labels"]["severity"] in ("warning", "critical"), rule
            assert rule["annotations"]["summary"], rule
            found.append(rule)
    return found


def rule_expressions() -> dict[str, str]:
    """Each rule's expression, by its alert (and its ``metric`` label where one alert has a
    rule per metric), but a rule on Prometheus's own ``up``, which names none of ours."""
    return {
        " ".join(filter(None, [rule["alert"], rule["labels"].get("metric")])): rule["expr"]
        for rule in alert_rules()
        if rule["expr"].strip() != f"{SCRAPED} == 0"
    }


def runbook_path(alert: str) -> str:
    """Where an alert's runbook is: ``docs/ops/runbooks/<alert in kebab case>.md``."""
    return f"docs/ops/runbooks/{re.sub(r'(?<!^)(?=[A-Z])', '-', alert).lower()}.md"


def runbook_mismatches(rules: list[dict], pages: dict[str, str]) -> list[str]:
    """What breaks "one page per alert, each alert's ``runbook_url`` its page": ``pages`` maps
    a page's path to its text."""
    problems = []
    alerts = {rule["alert"] for rule in rules}
    for rule in rules:
        url = rule["annotations"].get("runbook_url")
        if url != runbook_path(rule["alert"]):
            problems.append(f"{rule['alert']}: runbook_url {url!r}")
    for alert in sorted(alerts):
        text = pages.get(runbook_path(alert))
        if text is None:
            problems.append(f"{alert}: no page {runbook_path(alert)}")
        elif not text.startswith(f"# {alert}\n"):
            problems.append(f"{runbook_path(alert)}: its title is not {alert}")
        elif [line for line in text.splitlines() if line in SECTIONS] != list(SECTIONS):
            problems.append(f"{runbook_path(alert)}: not the sections {SECTIONS}")
    for path in sorted(set(pages) - {runbook_path(alert) for alert in alerts}):
        problems.append(f"{path}: no alert has this runbook")
    return problems


def dashboard_expressions() -> dict[str, str]:
    dashboard = json.loads((OPS / "grafana-dashboard.json").read_text())
    return {
        f"{panel['title']} {target['refId']}": target["expr"]
        for panel in dashboard["panels"]
        for target in panel["targets"]
    }


def exposed_names(text: str) -> set[str]:
    from prometheus_client.parser import text_string_to_metric_families

    names = set()
    for family in text_string_to_metric_families(text):
        names.update(family.name + suffix for suffix in SUFFIXES.get(family.type, ("",)))
    return names


@pytest.mark.django_db
def test_every_metric_in_the_alerts_and_the_dashboard_exists(
    api, settings, alice_funded, catalog_item, hooks, django_capture_on_commit_callbacks
):
    settings.METRICS_TOKEN = "docs-check"
    listing = make_listing(catalog_item, "10.00")
    with django_capture_on_commit_callbacks(execute=True):
        bought = api.post(
            "/secure/buy",
            {"tradeUrl": trade_url(42), "items": [{"itemId": listing.id, "price": 10.50}]},
            format="json",
            headers=alice_funded.headers,
        )
    assert bought.status_code == 200, bought.json()
    scraped = api.get("/metrics", headers={"Authorization": "Bearer docs-check"})
    assert scraped.status_code == 200
    text = scraped.content.decode()
    exposed = exposed_names(text)
    assert parsed(text)[1]  # samples, not only declarations

    expressions = {**rule_expressions(), **dashboard_expressions()}
    assert len(expressions) > 30
    missing = {}
    for where, expr in expressions.items():
        named = set(METRIC.findall(expr))
        assert named, f"{where} names no trading_ metric: {expr}"
        if named - exposed:
            missing[where] = sorted(named - exposed)
    assert not missing, missing


def test_the_check_catches_a_metric_that_does_not_exist():
    exposed = exposed_names("# HELP trading_a A.\n# TYPE trading_a counter\ntrading_a_total 1.0\n")
    assert "trading_a_total" in exposed
    named = set(METRIC.findall('sum(rate(trading_a_total[5m])) / sum(trading_b{x="1"})'))
    assert named - exposed == {"trading_b"}


def test_every_alert_has_its_runbook_and_every_runbook_its_alert():
    pages = {
        f"docs/ops/runbooks/{page.name}": page.read_text()
        for page in RUNBOOKS.glob("*.md")
        if page.name != "README.md"
    }
    assert len(pages) >= 20
    assert runbook_mismatches(alert_rules(), pages) == []
    # The only rule naming none of the service's metrics is the one on Prometheus's ``up``.
    assert [rule["alert"] for rule in alert_rules() if not METRIC.search(rule["expr"])] == [
        "TargetDown"
    ]


def test_the_runbook_check_catches_a_page_or_a_link_missing():
    page = f"# A\n\n{SECTIONS[0]}\n\n{SECTIONS[1]}\n\n{SECTIONS[2]}\n"
    linked = {"alert": "A", "annotations": {"runbook_url": "docs/ops/runbooks/a.md"}}
    assert runbook_mismatches([linked], {"docs/ops/runbooks/a.md": page}) == []
    unlinked = {"alert": "A", "annotations": {}}
    assert runbook_mismatches([unlinked], {"docs/ops/runbooks/a.md": page}) == [
        "A: runbook_url None"
    ]
    assert runbook_mismatches([linked], {}) == ["A: no page docs/ops/runbooks/a.md"]
    orphan = {"docs/ops/runbooks/a.md": page, "docs/ops/runbooks/b-gone.md": page}
    assert runbook_mismatches([linked], orphan) == [
        "docs/ops/runbooks/b-gone.md: no alert has this runbook"
    ]
    untitled = {"docs/ops/runbooks/a.md": page.replace("# A", "# B")}
    assert runbook_mismatches([linked], untitled) == ["docs/ops/runbooks/a.md: its title is not A"]
