from functools import cache

from django.conf import settings
from django.utils.module_loading import import_string

from merchants.verification.base import IdentityProvider


@cache
def get_identity_provider() -> IdentityProvider:
    """The identity verification provider, named by the IDENTITY_PROVIDER setting."""
    provider: IdentityProvider = import_string(settings.IDENTITY_PROVIDER)()
    return provider
