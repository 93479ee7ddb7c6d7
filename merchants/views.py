"""Base views of the merchant and client endpoints: which caller they take, the rate-limit
budget they spend, the Idempotency-Key of their POSTs."""

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar, cast

from django.db import DatabaseError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer

from core.api.docs import OperationDoc, RateLimitDoc, Window
from core.api.idempotency import (
    IdempotentReplayError,
    idempotency_key,
    kept_body,
    replay_response,
    request_fingerprint,
)
from core.api.views import ApiView
from core.context import context_merchant_set, current_request_id
from core.errors import DomainError
from core.metrics import RATE_LIMIT_REFUSALS
from merchants.authentication import (
    ApiKeyAuthentication,
    ClientCaller,
    ClientTokenAuthentication,
    MerchantCaller,
    bearer_token,
    request_ip,
)
from merchants.gate import request_gate
from merchants.models import Merchant, Scope
from merchants.permissions import ANY_SCOPE, SCOPE_ERRORS, KeyScopePermission
from merchants.ratelimits import (
    Limited,
    Rate,
    RateLimitState,
    rate_limit_hit,
    rate_limit_uncount,
    rate_limit_window,
)
from merchants.selectors import api_key_peek, client_token_peek
from merchants.services import (
    IdempotencyClaim,
    KeptAnswer,
    idempotent_request_answer,
    idempotent_request_claim,
    idempotent_request_release,
)

logger = logging.getLogger(__name__)


class CallerApiView(ApiView):
    """An endpoint a merchant calls, itself or through one of its clients."""

    #: The budget this endpoint spends; None: not limited.
    rate_limit: ClassVar[Limited | None] = None

    #: This request's count in its budget's window (once admitted).
    rate_limit_state: RateLimitState | None = None
    #: The Idempotency-Key this request holds while it runs (a POST that sent one).
    idempotency: IdempotencyClaim | None = None
    idempotent_posts = True

    def merchant(self, request: Request) -> Merchant:
        return self.caller(request).merchant

    def caller(self, request: Request) -> MerchantCaller | ClientCaller:
        caller = request.user
        assert isinstance(caller, (MerchantCaller, ClientCaller))
        return caller

    def declared_errors(self) -> tuple[str, ...]:
        limited = ("RATE_LIMITED",) if self.rate_limit is not None else ()
        return (*limited, *self.errors)

    def documented_rate_limit(self) -> RateLimitDoc | None:
        if self.rate_limit is None:
            return None
        return RateLimitDoc(
            budget=self.rate_limit.bucket,
            verified=_window(self.rate_limit.rates.verified),
            unverified=_window(self.rate_limit.rates.unverified),
        )

    checks_maintenance = True  # in ``initial``, with the request's other shared reads

    def caller_peek(self, request: Request) -> tuple[str, bool] | None:
        """Who calls (merchant id, verified), as far as this process can tell without I/O
        (None: it cannot)."""
        return None

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        """Admission (``admit``), then a POST's Idempotency-Key: a request refused before it
        runs keeps nothing under its key (as Stripe)."""
        self.admit(request, *args, **kwargs)
        if request.method == "POST":
            self.idempotency_claim(request)

    def admit(self, request: Request, *args: Any, **kwargs: Any) -> None:
        """Maintenance, then authentication and permissions (DRF's), then the rate limit, in
        that order, with one round trip to Redis: the switches and the auth epoch are read, and
        the request counted, together (``merchants.gate``). A count made for a caller that is
        then refused before the limiter is taken back."""
        limited = self.rate_limit
        guess = self.caller_peek(request) if limited is not None else None
        window = None
        if guess is not None and limited is not None:
            window = rate_limit_window(merchant_id=guess[0], verified=guess[1], limited=limited)
        gate = request_gate(window=window)
        counted = window if gate.hits is not None else None
        try:
            if gate.maintenance:
                raise DomainError("SYSTEM_MAINTENANCE", retry_after=60)
            super().initial(request, *args, **kwargs)
        except Exception:
            if counted is not None:
                rate_limit_uncount(window=counted)
            raise
        if limited is None:
            return
        merchant = self.merchant(request)
        context_merchant_set(merchant.pk)
        if counted is not None and gate.hits is not None and _same(guess, merchant):
            self.rate_limit_state = counted.state(gate.hits)
        else:
            if counted is not None:
                rate_limit_uncount(window=counted)
            self.rate_limit_state = rate_limit_hit(
                merchant_id=str(merchant.pk), verified=merchant.is_verified, limited=limited
            )
        if not self.rate_limit_state.allowed:
            RATE_LIMIT_REFUSALS.labels(limited.operation).inc()
            raise DomainError("RATE_LIMITED", retry_after=self.rate_limit_state.retry_after)

    def idempotency_claim(self, request: Request) -> None:
        """Take the request's key (per merchant, and per client account for a client token),
        or answer with the first answer it got (``IdempotentReplayError``), or refuse."""
        key = idempotency_key(request)
        if key is None:
            return
        caller = request.user
        assert isinstance(caller, (MerchantCaller, ClientCaller))
        found = idempotent_request_claim(
            merchant=caller.merchant,
            caller=caller.platform_id if isinstance(caller, ClientCaller) else "",
            key=key,
            fingerprint=request_fingerprint(request),
            request_id=current_request_id(),
        )
        if isinstance(found, KeptAnswer):
            raise IdempotentReplayError(
                replay_response(
                    status_code=found.status_code,
                    body=found.body,
                    original_request_id=found.request_id,
                )
            )
        self.idempotency = found

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, IdempotentReplayError):
            return exc.response  # type: ignore[return-value]  # any response; DRF passes it on
        return super().handle_exception(exc)

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        # A replay is a plain HttpResponse (DRF passes any response on).
        response = super().finalize_response(request, response, *args, **kwargs)
        if self.rate_limit_state is not None:
            response["X-RateLimit-Limit"] = str(self.rate_limit_state.limit)
            response["X-RateLimit-Remaining"] = str(self.rate_limit_state.remaining)
        claim, self.idempotency = self.idempotency, None
        if claim is not None and isinstance(response, Response):
            _answer_keep(claim, response)
        return response


def _answer_keep(claim: IdempotencyClaim, response: Response) -> None:
    """After the view's work committed: keep its answer under the key, or free the key for an
    answer that is not kept. Should the database fail here, the key stays held until its lease
    ends, and a retry then runs the request again."""
    try:
        body = kept_body(response)
        if body is None:
            idempotent_request_release(claim=claim)
        else:
            idempotent_request_answer(claim=claim, status_code=response.status_code, body=body)
    except DatabaseError:
        logger.warning("the answer to an Idempotency-Key could not be kept", exc_info=True)


def _window(rate: Rate) -> Window:
    return Window(limit=rate.limit, seconds=rate.window_seconds)


def _same(guess: tuple[str, bool] | None, merchant: Merchant) -> bool:
    """The request was counted in the window of the merchant it turned out to be."""
    return guess == (str(merchant.pk), merchant.is_verified)


class MerchantApiView(CallerApiView):
    """``api-key`` header; ``required_scope`` names the scope the key must carry."""

    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [KeyScopePermission]
    required_scope: ClassVar[str] = Scope.CORE_ACCESS

    def caller(self, request: Request) -> MerchantCaller:
        assert isinstance(request.user, MerchantCaller)
        return request.user

    def caller_peek(self, request: Request) -> tuple[str, bool] | None:
        raw_key = request.headers.get("api-key")
        return api_key_peek(raw_key=raw_key, ip=request_ip(request)) if raw_key else None

    def declared_errors(self) -> tuple[str, ...]:
        return (*SCOPE_ERRORS[self.required_scope], *super().declared_errors())

    def documented_access(self) -> str:
        scope = (
            "either scope (`CORE_ACCESS` or `LEDGER_READ`)"
            if self.required_scope == ANY_SCOPE
            else f"the `{self.required_scope}` scope"
        )
        return f"the merchant's API key in the `api-key` header, with {scope}."


class ClientApiView(CallerApiView):
    """Client token in ``Authorization`` (``Bearer `` optional)."""

    authentication_classes = [ClientTokenAuthentication]

    def documented_access(self) -> str:
        return (
            "a client token from `POST /auth/authenticate-client` in the `Authorization` header "
            "(`Bearer <token>`; the `Bearer ` prefix is optional). The operation acts for the "
            "platform account the token names, and spends its merchant's rate limit."
        )

    def caller(self, request: Request) -> ClientCaller:
        assert isinstance(request.user, ClientCaller)
        return request.user

    def caller_peek(self, request: Request) -> tuple[str, bool] | None:
        token = bearer_token(request.headers.get("Authorization", ""))
        return client_token_peek(token=token) if token else None


View = TypeVar("View", bound=CallerApiView)


@dataclass(frozen=True)
class Route:
    """What one caller's route of an operation says of itself; the rest is the operation's."""

    operation_id: str
    rate_limit: Limited
    doc: OperationDoc
    #: This caller's input, where its fields are not the operation's (``Operation.input``).
    input: type[Serializer] | None = None
    #: The errors only this caller's requests meet, beyond the operation's own.
    errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class Operation:
    """An endpoint offered to merchants (``secure``, API key) and to clients (``client``, client
    token), declared once: its handler (written once; what differs by caller it reads from
    ``view.caller(request)``), its input, the errors both routes answer, and each caller's
    route. ``views()`` makes its two views; each is named after its operationId
    (``getSecureMarket``: ``SecureMarketApi``) and lives in the handler's module."""

    method: Literal["get", "post"]
    handler: Callable[..., Response]
    secure: Route
    client: Route
    #: The query string's serializer of a GET, the body's of a POST.
    input: type[Serializer] | None = None
    errors: tuple[str, ...] = ()

    def views(self) -> tuple[type[MerchantApiView], type[ClientApiView]]:
        return self._view(MerchantApiView, self.secure), self._view(ClientApiView, self.client)

    def _view(self, base: type[View], route: Route) -> type[View]:
        name = re.sub("^(get|list)(?=[A-Z])", "", route.operation_id)
        name = f"{name[0].upper()}{name[1:]}Api"
        parses = "query_serializer" if self.method == "get" else "body_serializer"
        declared = {
            "__module__": self.handler.__module__,
            "__qualname__": name,
            self.method: self.handler,
            parses: route.input or self.input,
            "operation_id": route.operation_id,
            "rate_limit": route.rate_limit,
            "doc": route.doc,
            "errors": (*self.errors, *route.errors),
        }
        return cast(type[View], type(name, (base,), declared))
