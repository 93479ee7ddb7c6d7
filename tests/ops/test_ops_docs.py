"""docs/ops: every metric the alert rules and the Grafana dashboard name is one the service
exposes. The app is exercised first (a request, a buy through the approval, a scrape), then the
names in every expression are compared with the metric families of a scrape; names differing
only by Prometheus's suffixes (``_total``, ``_bucket``, ``_sum``, ``_count``) count as theirs."""

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
METRIC = re.compile(r"\btrading_[a-z0-9_]+")
SUFFIXES = {
    "counter": ("_total", "_created"),
    "histogram": ("_bucket", "_sum", "_count", "_created"),
    "gauge": ("",),
}


def rule_expressions() -> dict[str, str]:
    rules = yaml.safe_load((OPS / "alerts.yml").read_text())
    found = {}
    for group in rules["groups"]:
        for rule in group["rules"]:
            assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}, rule
            assert rule["labels"]["severity"] in ("warning", "critical"), rule
            assert rule["annotations"]["summary"], rule
            found[rule["alert"]] = rule["expr"]
    return found


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
