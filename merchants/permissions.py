from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from core.errors import DomainError
from merchants.authentication import MerchantCaller
from merchants.models import Scope

# A view's required_scope when a key with either scope may call it.
ANY_SCOPE = "ANY"
# What KeyScopePermission can refuse, by the view's required_scope (for the OpenAPI).
SCOPE_ERRORS: dict[str, tuple[str, ...]] = {
    Scope.CORE_ACCESS: ("API_KEY_SCOPE_DENIED",),
    Scope.LEDGER_READ: ("INSUFFICIENT_SCOPE", "MERCHANT_API_KEY_REQUIRED"),
    ANY_SCOPE: ("API_KEY_SCOPE_DENIED",),
}


class KeyScopePermission(BasePermission):
    """The view's ``required_scope``; the ledger scope also refuses admin keys (1300)."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        caller = request.user
        assert isinstance(caller, MerchantCaller)
        scope = getattr(view, "required_scope", Scope.CORE_ACCESS)
        key = caller.api_key
        if scope == Scope.LEDGER_READ:
            if key.is_admin:
                raise DomainError("MERCHANT_API_KEY_REQUIRED")
            if Scope.LEDGER_READ not in key.scopes:
                raise DomainError("INSUFFICIENT_SCOPE")
        elif scope == ANY_SCOPE:
            if not set(key.scopes) & set(Scope.values):
                raise DomainError("API_KEY_SCOPE_DENIED")
        elif scope not in key.scopes:
            raise DomainError("API_KEY_SCOPE_DENIED")
        return True
