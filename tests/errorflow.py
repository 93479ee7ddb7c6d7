"""The catalog keys a view can answer with, read from the code (``ast``): a walk from the view's
handler methods (``get``, ``post``, ...) through every project function they call, or pass on to
be called, collecting the keys the code raises them with (``DomainError("KEY")`` and the
helpers and tables that name a key: a catalog key written in the code is one it raises).

Names are resolved as Python would: a module's own functions and classes, its imports of project
modules, ``self.method`` through the view's classes. A call the walk cannot resolve (a method of
an object it cannot type) adds nothing, save a call of an outside system's method whose failure's
key the code raises (``DomainError(exc.error_key)``): it adds the keys the protocol declares that
method's failures carry (``ADAPTER_ERRORS`` in its module)."""

import ast
import importlib
import inspect
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from core.errors import CATALOG

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = (
    "core",
    "config",
    "merchants",
    "wallet",
    "ledger",
    "trading",
    "crypto",
    "sandbox",
    "feed",
)
HANDLERS = ("get", "post", "put", "patch", "delete")
# Not walked: the catalog itself names every key (``validation_error`` raises VALIDATION_FAILED,
# which every endpoint declares).
OPAQUE = {"core.errors"}

# The protocols of the outside systems whose failures carry a catalog key (``error_key``): their
# ``ADAPTER_ERRORS`` say which keys each method's failures carry. (The marketplace's failure is
# SERVICE_UNAVAILABLE, generic; the chains' and the identity provider's carry none: the services
# turn them into keys the walk reads.)
ADAPTERS = ("trading.platform.base",)


@dataclass
class Module:
    name: str
    defs: dict[str, ast.AST] = field(default_factory=dict)  # functions, classes, constants
    imports: dict[str, str] = field(default_factory=dict)  # local name -> dotted target


@cache
def module(name: str) -> Module | None:
    """A project module, parsed once (None: not a project module)."""
    if name.split(".")[0] not in PACKAGES:
        return None
    base = ROOT / name.replace(".", "/")
    path = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    if not path.exists():
        return None
    found = Module(name)
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.defs[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    found.defs[target.id] = node
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                found.imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                found.imports[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
    return found


def lookup(dotted: str) -> tuple[Module, ast.AST] | Module | None:
    """What a dotted name is: a definition in a project module, a project module, or None."""
    as_module = module(dotted)
    if as_module is not None:
        return as_module
    owner, _, name = dotted.rpartition(".")
    found = module(owner) if owner else None
    if found is None:
        return None
    if name in found.defs:
        return found, found.defs[name]
    if name in found.imports:  # re-exported
        return lookup(found.imports[name])
    return None


def resolve(mod: Module, name: str) -> tuple[Module, ast.AST] | Module | None:
    if name in mod.defs:
        return mod, mod.defs[name]
    if name in mod.imports:
        return lookup(mod.imports[name])
    return None


@dataclass(frozen=True)
class Walk:
    """One view's walk: its classes (for ``self.method``) and what it found."""

    view: type
    keys: set[str] = field(default_factory=set)
    seen: set[int] = field(default_factory=set)

    def method(self, name: str) -> tuple[Module, ast.AST] | None:
        """Where the view's method is written: in its class, or, for a handler an operation's
        two views share (``merchants.views.Operation``), where the function is."""
        for klass in self.view.__mro__:
            if name in vars(klass):
                return written(inspect.unwrap(vars(klass)[name]))
        return None

    def visit(self, mod: Module, node: ast.AST, *, methods: bool = False) -> None:
        """Collect from ``node`` (a function, a class's constructor, a module constant) once."""
        if id(node) in self.seen:
            return
        self.seen.add(id(node))
        if isinstance(node, ast.ClassDef):
            body = [item for item in node.body if getattr(item, "name", None) == "__init__"]
            for base in node.bases:
                self.follow(mod, base)
            for item in body:
                self.visit(mod, item)
            return
        called: set[str] = set()  # methods called on some object
        carries = False  # raises the key an adapter's failure carries (``exc.error_key``)
        for child in ast.walk(node):
            if isinstance(child, ast.Constant) and child.value in CATALOG:
                self.keys.add(child.value)
            elif isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute):
                called.add(child.func.attr)
            elif isinstance(child, ast.Attribute) and child.attr == "error_key":
                carries = True
            if isinstance(child, (ast.Name, ast.Attribute)) and child is not node:
                self.follow(mod, child, methods=methods)
        if carries:
            for protocol in ADAPTERS:
                errors = importlib.import_module(protocol).ADAPTER_ERRORS
                self.keys.update(key for name in called for key in errors.get(name, ()))

    def follow(self, mod: Module, expr: ast.AST, *, methods: bool = False) -> None:
        """Walk what a name (``f``, ``module.f``, ``self.f``) stands for, if it is ours."""
        target: tuple[Module, ast.AST] | Module | None = None
        of_view = False
        if isinstance(expr, ast.Name):
            target = resolve(mod, expr.id)
        elif isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            if expr.value.id in ("self", "cls") and methods:
                target, of_view = self.method(expr.attr), True
            else:
                owner = resolve(mod, expr.value.id)
                if isinstance(owner, Module):
                    target = resolve(owner, expr.attr)
        if isinstance(target, tuple) and target[0].name not in OPAQUE:
            self.visit(*target, methods=of_view)


def written(function: object) -> tuple[Module, ast.AST] | None:
    """A function's definition, found by its module and qualified name (None: not ours)."""
    mod = module(getattr(function, "__module__", None) or "")
    path = str(getattr(function, "__qualname__", "")).split(".")
    node = mod.defs.get(path[0]) if mod else None
    for name in path[1:]:
        body = node.body if isinstance(node, ast.ClassDef) else []
        node = next((item for item in body if getattr(item, "name", None) == name), None)
    return (mod, node) if mod is not None and node is not None else None


def raisable(view: type) -> set[str]:
    """The catalog keys the view's handlers can raise, through what they call."""
    walk = Walk(view)
    for name in HANDLERS:
        found = walk.method(name) if hasattr(view, name) else None
        if found is not None:
            walk.visit(*found, methods=True)
    return walk.keys
