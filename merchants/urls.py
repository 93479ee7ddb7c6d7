from django.urls import path

from merchants.apis import AuthenticateClientApi, WebhookEventResendApi, WebhookEventsApi

urlpatterns = [
    path("auth/authenticate-client", AuthenticateClientApi.as_view(), name="authenticate-client"),
    path("secure/webhooks/events", WebhookEventsApi.as_view()),
    path("secure/webhooks/events/<str:id>/resend", WebhookEventResendApi.as_view()),
]
