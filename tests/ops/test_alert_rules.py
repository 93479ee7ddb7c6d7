"""docs/ops/alerts.yml as Prometheus reads it: ``promtool check rules`` accepts it, and
``promtool test rules`` evaluates the alerts on made-up series, each case both firing and
staying silent: a target down, a metric gone, a slow route, the wallet's invariants and their
check's age, the outbox's age. The expected annotations are the rule's own, with the labels and
value filled in as Prometheus fills them."""

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from django.conf import settings

RULES = Path(settings.BASE_DIR) / "docs" / "ops" / "alerts.yml"
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"
MISSING = "promtool is missing: apt-get install --no-install-recommends prometheus"
TEMPLATE = re.compile(r"\{\{ \$(labels\.(\w+)|value) \}\}")


@dataclass
class Firing:
    """One alert expected at ``at``: its labels beyond the rule's, and ``$value`` as rendered."""

    labels: dict[str, str]
    value: str = ""


@dataclass
class Case:
    name: str
    series: dict[str, str]  # series -> promtool's expanding notation, one sample a minute
    alert: str
    quiet_at: str  # nothing fires yet (or ever, with ``firing`` empty)
    firing_at: str = ""
    firing: list[Firing] = field(default_factory=list)


# Everything MetricAbsent looks for, present: remove one to make it fire.
ALWAYS = {
    'trading_webhook_outbox_pending{kind="approval", instance="a"}': "0x30",
    'trading_celery_queue_tasks{queue="celery", state="waiting", instance="a"}': "0x30",
    'trading_wallet_check_problems{invariant="drifted_accounts", instance="a"}': "0x30",
    'trading_http_requests_total{route="health", method="GET", status="200", instance="a"}': (
        "0+60x30"
    ),
    'trading_celery_task_last_run_timestamp_seconds{task="webhooks.sweep", instance="a"}': (
        "0+60x30"
    ),
}
HISTOGRAM = "trading_http_request_duration_seconds"
LAST_RUN = "trading_celery_task_last_run_timestamp_seconds"


def latency(route: str, per_minute: int, slow: bool) -> dict[str, str]:
    """A route's histogram: ``per_minute`` requests, all under 50 ms or all between 1 and
    2.5 s."""
    grows = f"0+{per_minute}x40"
    labels = f'route="{route}", method="POST", instance="a"'
    return {
        f'{HISTOGRAM}_bucket{{{labels}, le="0.05"}}': "0x40" if slow else grows,
        f'{HISTOGRAM}_bucket{{{labels}, le="1.0"}}': "0x40" if slow else grows,
        f'{HISTOGRAM}_bucket{{{labels}, le="2.5"}}': grows,
        f'{HISTOGRAM}_bucket{{{labels}, le="+Inf"}}': grows,
        f"{HISTOGRAM}_count{{{labels}}}": grows,
    }


def without(name: str) -> dict[str, str]:
    return {series: values for series, values in ALWAYS.items() if not series.startswith(name)}


CASES = [
    Case(
        "a target stops answering",
        {'up{job="trading", instance="10.0.0.5:8000"}': "1 1 0x10"},
        "TargetDown",
        quiet_at="3m",
        firing_at="5m",
        firing=[Firing({"job": "trading", "instance": "10.0.0.5:8000"})],
    ),
    Case("every metric there", ALWAYS, "MetricAbsent", quiet_at="20m"),
    Case(
        "the outbox's reading fails",
        without("trading_webhook_outbox_pending"),
        "MetricAbsent",
        quiet_at="3m",
        firing_at="6m",
        firing=[Firing({"metric": "trading_webhook_outbox_pending"})],
    ),
    Case(
        "no worker ever ran the sweep",
        without("trading_celery_task_last_run_timestamp_seconds"),
        "MetricAbsent",
        quiet_at="8m",
        firing_at="11m",
        firing=[Firing({"metric": LAST_RUN, "task": "webhooks.sweep"})],
    ),
    Case(
        "one route is slow, one fast, one slow but rare",
        latency("secure/buy", 60, slow=True)
        | latency("v1/wallets/me/balance", 600, slow=False)
        | latency("secure/cancel/<str:tradeId>", 1, slow=True),
        "RouteLatencyHigh",
        quiet_at="5m",
        firing_at="25m",
        firing=[Firing({"route": "secure/buy"})],
    ),
    Case(
        "the last check found drifted balances",
        {
            'trading_wallet_check_problems{invariant="drifted_accounts", instance="a"}': "0 2x5",
            'trading_wallet_check_problems{invariant="orphan_locks", instance="a"}': "0x5",
        },
        "WalletInvariantBroken",
        quiet_at="0m",
        firing_at="1m",
        firing=[Firing({"invariant": "drifted_accounts"}, value="2")],
    ),
    Case(
        "no check was ever stored",
        {'trading_wallet_check_age_seconds{instance="a"}': "+Inf+0x20"},
        "WalletCheckStale",
        quiet_at="5m",
        firing_at="11m",
        firing=[Firing({})],
    ),
    Case(
        "the check runs every hour",
        {'trading_wallet_check_age_seconds{instance="a"}': "0+60x59 0+60x59"},
        "WalletCheckStale",
        quiet_at="100m",
    ),
    Case(
        "an approval waits",
        {
            'trading_webhook_outbox_oldest_pending_age_seconds{kind="approval", instance="a"}': (
                "0 30 90 150 210 270 330"
            )
        },
        "ApprovalCallbacksWaiting",
        quiet_at="3m",
        firing_at="6m",
        firing=[Firing({})],
    ),
]


def rule_of(alert: str, firing: Firing) -> dict:
    """The rule an alert comes from: MetricAbsent has one per metric, its ``metric`` label."""
    groups = yaml.safe_load(RULES.read_text())["groups"]
    (rule,) = [
        rule
        for group in groups
        for rule in group["rules"]
        if rule["alert"] == alert
        and all(
            firing.labels.get(name) == value
            for name, value in rule["labels"].items()
            if name != "severity"
        )
    ]
    return rule


def expected(alert: str, firing: Firing) -> dict:
    rule = rule_of(alert, firing)
    labels = {**rule["labels"], **firing.labels}

    def render(text: str) -> str:
        return TEMPLATE.sub(lambda m: firing.value if m[1] == "value" else labels[m[2]], text)

    return {
        "exp_labels": labels,
        "exp_annotations": {key: render(text) for key, text in rule["annotations"].items()},
    }


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    assert Path(PROMTOOL).exists(), MISSING
    return subprocess.run(
        [PROMTOOL, *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_prometheus_accepts_the_rules():
    checked = promtool("check", "rules", str(RULES))
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_alerts_fire_when_they_should_and_only_then(tmp_path: Path):
    tests = []
    for case in CASES:
        checks = [{"eval_time": case.quiet_at, "alertname": case.alert, "exp_alerts": []}]
        if case.firing:
            exp = [expected(case.alert, firing) for firing in case.firing]
            checks.append({"eval_time": case.firing_at, "alertname": case.alert, "exp_alerts": exp})
        tests.append(
            {
                "name": case.name,
                "interval": "1m",
                "input_series": [
                    {"series": series, "values": values} for series, values in case.series.items()
                ],
                "alert_rule_test": checks,
            }
        )
    unit = tmp_path / "alerts.test.yml"
    unit.write_text(
        yaml.safe_dump({"rule_files": [str(RULES)], "evaluation_interval": "1m", "tests": tests})
    )
    tested = promtool("test", "rules", str(unit))
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_a_wrong_expectation_fails(tmp_path: Path):
    """The unit test above can fail: an alert expected where none fires is reported."""
    unit = tmp_path / "wrong.test.yml"
    unit.write_text(
        yaml.safe_dump(
            {
                "rule_files": [str(RULES)],
                "tests": [
                    {
                        "interval": "1m",
                        "input_series": [
                            {"series": 'up{job="trading", instance="x"}', "values": "1x10"}
                        ],
                        "alert_rule_test": [
                            {
                                "eval_time": "5m",
                                "alertname": "TargetDown",
                                "exp_alerts": [{"exp_labels": {"severity": "critical"}}],
                            }
                        ],
                    }
                ],
            }
        )
    )
    assert promtool("test", "rules", str(unit)).returncode != 0
