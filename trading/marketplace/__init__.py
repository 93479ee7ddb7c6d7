from functools import cache

from django.conf import settings
from django.utils.module_loading import import_string

from trading.marketplace.base import Marketplace


@cache
def get_marketplace() -> Marketplace:
    """The supplier marketplace this deployment talks to, named by the MARKETPLACE setting."""
    marketplace: Marketplace = import_string(settings.MARKETPLACE)()
    return marketplace
