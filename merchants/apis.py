from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from config.api.serializers import parse
from config.api.views import MerchantApiView
from merchants.serializers import AuthenticateClientIn, ClientTokenOut, client_data_from
from merchants.services import client_authenticate


class AuthenticateClientApi(MerchantApiView):
    operation = "auth.authenticate_client"
    errors = ("NO_API_SECRET_CONFIGURED",)

    @extend_schema(
        operation_id="authenticateClient",
        tags=["auth"],
        request=AuthenticateClientIn,
        responses=ClientTokenOut,
        summary="Issue a 24-hour client token and store the client's data.",
    )
    def post(self, request: Request) -> Response:
        body = parse(AuthenticateClientIn, request.data)
        token = client_authenticate(
            merchant=self.caller(request).merchant,
            platform_id=body["clientPlatformId"],
            trade_url=body["clientTradeUrl"],
            client_id=body.get("clientId"),
            client_data=client_data_from(body.get("clientData")),
        )
        return Response({"token": token})
