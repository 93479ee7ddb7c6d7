"""Every module of the apps sits in a layer of the import contracts (pyproject.toml), so
``lint-imports`` checks where it may import from: a module in no layer is free to import
anything, and nothing would say so."""

import re
import tomllib
from pathlib import Path

import grimp

CONTRACTS = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["tool"][
    "importlinter"
]
# Modules no layer holds yet; the list may only shrink.
NOT_YET_PLACED: set[str] = set()


def layered_containers() -> dict[str, set[str]]:
    """Each container of a layers contract, with the modules its layers name."""
    containers: dict[str, set[str]] = {}
    for contract in CONTRACTS["contracts"]:
        if contract["type"] != "layers":
            continue
        for container in contract.get("containers", []):
            for layer in contract["layers"]:
                for name in re.split(r"[|:]", layer):
                    containers.setdefault(container, set()).add(
                        f"{container}.{name.strip().strip('()')}"
                    )
    return containers


def unplaced_modules() -> set[str]:
    graph = grimp.build_graph(*CONTRACTS["root_packages"])
    containers = layered_containers()
    layers = set().union(*containers.values())
    return {
        module
        for module in graph.modules
        if module not in CONTRACTS["root_packages"]
        and module not in containers
        and ".migrations" not in module
        and not any(module == layer or module.startswith(f"{layer}.") for layer in layers)
    }


def test_every_module_of_the_apps_sits_in_a_layer():
    assert unplaced_modules() == NOT_YET_PLACED


def test_a_module_outside_every_layer_is_found(tmp_path, monkeypatch):
    app = tmp_path / "wallet_shadow"
    app.mkdir()
    (app / "__init__.py").write_text("")
    (app / "models.py").write_text("")
    (app / "stray.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(CONTRACTS, "root_packages", ["wallet_shadow"])
    monkeypatch.setitem(
        CONTRACTS,
        "contracts",
        [{"type": "layers", "containers": ["wallet_shadow"], "layers": ["(models)"]}],
    )
    assert unplaced_modules() == {"wallet_shadow.stray"}
