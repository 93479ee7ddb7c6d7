"""Reading the metrics as Prometheus reads them: the exposition text, parsed."""

from collections.abc import Mapping

from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parsed(text: str) -> tuple[set[str], Samples]:
    """The metric families' names and every sample's value by (sample name, labels)."""
    names: set[str] = set()
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        names.add(family.name)
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return names, samples


def value(samples: Samples, name: str, labels: Mapping[str, str] | None = None) -> float:
    """The sum of the samples named ``name`` whose labels include ``labels`` (0 when none)."""
    wanted = set((labels or {}).items())
    return sum(v for (n, have), v in samples.items() if n == name and wanted <= have)
