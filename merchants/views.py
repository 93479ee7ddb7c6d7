"""Base views of the merchant and client endpoints: which caller they take, the rate-limit
budget they spend."""

from typing import Any, ClassVar

from rest_framework.request import Request
from rest_framework.response import Response

from config.api.views import ApiView
from core.errors import DomainError
from merchants.authentication import (
    ApiKeyAuthentication,
    ClientCaller,
    ClientTokenAuthentication,
    MerchantCaller,
)
from merchants.models import Merchant, Scope
from merchants.permissions import SCOPE_ERRORS, KeyScopePermission
from merchants.ratelimits import RateLimitState, rate_limit_hit


class CallerApiView(ApiView):
    """An endpoint a merchant calls, itself or through one of its clients."""

    #: Entry of ``merchants.ratelimits.REGISTRY`` this endpoint spends; None: not limited.
    operation: ClassVar[str | None] = None

    rate_limit: RateLimitState | None = None

    def merchant(self, request: Request) -> Merchant:
        caller = request.user
        assert isinstance(caller, (MerchantCaller, ClientCaller))
        return caller.merchant

    def declared_errors(self) -> tuple[str, ...]:
        limited = ("RATE_LIMITED",) if self.operation is not None else ()
        return (*limited, *self.errors)

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        if self.operation is not None:
            merchant = self.merchant(request)
            self.rate_limit = rate_limit_hit(
                merchant_id=str(merchant.pk),
                verified=merchant.is_verified,
                operation=self.operation,
            )
            if not self.rate_limit.allowed:
                raise DomainError("RATE_LIMITED", retry_after=self.rate_limit.retry_after)

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)
        if self.rate_limit is not None:
            response["X-RateLimit-Limit"] = str(self.rate_limit.limit)
            response["X-RateLimit-Remaining"] = str(self.rate_limit.remaining)
        return response


class MerchantApiView(CallerApiView):
    """``api-key`` header; ``required_scope`` names the scope the key must carry."""

    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [KeyScopePermission]
    required_scope: ClassVar[str] = Scope.CORE_ACCESS

    def caller(self, request: Request) -> MerchantCaller:
        assert isinstance(request.user, MerchantCaller)
        return request.user

    def declared_errors(self) -> tuple[str, ...]:
        return (*SCOPE_ERRORS[self.required_scope], *super().declared_errors())


class ClientApiView(CallerApiView):
    """Client token in ``Authorization`` (``Bearer `` optional)."""

    authentication_classes = [ClientTokenAuthentication]

    def caller(self, request: Request) -> ClientCaller:
        assert isinstance(request.user, ClientCaller)
        return request.user
