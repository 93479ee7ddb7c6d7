"""``config.settings`` composes one module per concern (config/settings/__init__.py): each setting
is defined by exactly one of them, and the composed settings carry every one as its module made
it, so a concern added to the package but not to the composition is found."""

import ast
import importlib
import pkgutil
from collections import Counter
from pathlib import Path
from types import ModuleType

import config.settings

CONCERNS = [
    importlib.import_module(f"config.settings.{name}")
    for _, name, _ in pkgutil.iter_modules(config.settings.__path__)
]


def defined_settings(module: ModuleType) -> set[str]:
    """The UPPERCASE names the module's own code assigns (not those it imports)."""
    tree = ast.parse(Path(str(module.__file__)).read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        names |= {t.id for t in targets if isinstance(t, ast.Name) and t.id.isupper()}
    return names


def test_each_setting_is_defined_by_one_concern():
    counts = Counter(name for module in CONCERNS for name in defined_settings(module))
    assert {name for name, count in counts.items() if count > 1} == set()


def test_the_settings_module_composes_every_concern():
    composed = {name for name in dir(config.settings) if name.isupper()}
    defined = {name: module for module in CONCERNS for name in defined_settings(module)}
    assert composed == set(defined)
    assert [
        name
        for name, module in defined.items()
        if getattr(config.settings, name) is not getattr(module, name)
    ] == []
