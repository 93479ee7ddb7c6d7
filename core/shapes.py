"""What a key of a response shape says beyond its Python type.

A response shape is a ``TypedDict`` in its app's ``representations.py``; the functions that build
bodies return it (mypy checks them) and the OpenAPI document is generated from it
(``core/api/schema.py``). A key whose type alone does not say everything is annotated:
``Annotated[str, Doc("Token amount as sent")]``.
"""

from dataclasses import dataclass
from typing import Annotated


@dataclass(frozen=True)
class Doc:
    """The key's description, string format (``uuid``, ``uri``) and integer bounds."""

    description: str = ""
    format: str = ""
    minimum: int | None = None
    maximum: int | None = None


Uuid = Annotated[str, Doc(format="uuid")]
Url = Annotated[str, Doc(format="uri")]
