# First: py_ecc raises the recursion limit when imported; this imports it and puts it back.
import config.recursion  # noqa: F401
from config.celery import app as celery_app

__all__ = ["celery_app"]
