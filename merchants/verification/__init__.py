from functools import cache

from core.adapters import adapter_load
from merchants.verification.base import IdentityProvider
from merchants.verification.unconfigured import UnconfiguredIdentityProvider


@cache
def get_identity_provider() -> IdentityProvider:
    """The identity verification provider, named by the IDENTITY_PROVIDER setting."""
    provider: IdentityProvider = adapter_load("IDENTITY_PROVIDER", UnconfiguredIdentityProvider)
    return provider
