from django.http import HttpRequest, HttpResponse
from django.urls import path

from limitapp.views import BuyApi, BuyPipelineApi, NoIoApi, PageApi, ReadApi, WriteApi


def health(request: HttpRequest) -> HttpResponse:
    return HttpResponse(b"ok")


urlpatterns = [
    path("health", health),
    path("limit/no-io", NoIoApi.as_view()),
    path("limit/read", ReadApi.as_view()),
    path("limit/write", WriteApi.as_view()),
    path("limit/page", PageApi.as_view()),
    path("limit/buy", BuyApi.as_view()),
    path("limit/buy-pipeline", BuyPipelineApi.as_view()),
]
