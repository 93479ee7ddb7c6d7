"""The base of every API view: the errors it documents beyond the generic ones."""

from typing import ClassVar

from rest_framework.views import APIView


class ApiView(APIView):
    #: Catalog keys this endpoint can answer with beyond the generic ones (for the OpenAPI).
    errors: ClassVar[tuple[str, ...]] = ()

    def declared_errors(self) -> tuple[str, ...]:
        """What the OpenAPI lists for this endpoint besides the generic errors and those of its
        authentication classes (their ``errors``)."""
        return self.errors
