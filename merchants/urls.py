from django.urls import path

from merchants.apis import AuthenticateClientApi

urlpatterns = [
    path("auth/authenticate-client", AuthenticateClientApi.as_view(), name="authenticate-client"),
]
