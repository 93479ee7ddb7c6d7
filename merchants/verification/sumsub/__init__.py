from merchants.verification.sumsub.provider import SumsubIdentityProvider

__all__ = ["SumsubIdentityProvider"]
