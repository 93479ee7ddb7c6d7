"""The trades in the console: the list (with the home's "past its expected time" filter), each
trade's readable page (``trade_page``), and the staff actions on a trade: retry its purchase,
cancel it (re-sending one of its webhooks is the webhook event's action, linked from the page)."""

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from core import clock
from core.admin.staff import StaffOperation, StaffOperationsAdmin
from core.admin_display import EstimatedCountPaginator, console_time
from core.staff import Staff
from merchants.console import merchant_column
from trading.admin.trade_page import GAME_NAMES, trade_page_context
from trading.models import IN_FLIGHT, Status, Trade
from trading.selectors.attention import WATCHED, expected_minutes, overdue_condition
from trading.selectors.trade_record import trade_record_get
from trading.services.staff import trade_cancel, trade_purchase_retry


class OverdueFilter(admin.SimpleListFilter):
    """Trades of one kind and state waiting past its expected time (the home links here)."""

    title = "past its expected time"
    parameter_name = "overdue"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [
            (key, f"{key.replace('.', ' ')} over {expected_minutes(key)} min") for key in WATCHED
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Trade]) -> QuerySet[Trade]:
        key = self.value()
        if key not in WATCHED:
            return queryset
        return queryset.filter(overdue_condition(key=key, now=clock.now()))


class GameFilter(admin.SimpleListFilter):
    """The games, named: Django's filter of a plain column would ask the table for every value
    it holds (a scan of every trade)."""

    title = "game"
    parameter_name = "game"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(str(game), name) for game, name in GAME_NAMES.items()]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Trade]) -> QuerySet[Trade]:
        value = self.value()
        if value and value.isdigit():
            return queryset.filter(game=int(value))
        return queryset


def _retry(trade: Trade, staff: Staff) -> str:
    waiting = trade_purchase_retry(trade_id=str(trade.pk), staff=staff)
    return f"the purchase of {waiting} item(s) is handed to a worker."


def _cancel(trade: Trade, staff: Staff) -> str:
    ended = trade_cancel(trade_id=str(trade.pk), staff=staff)
    refunded = " and refunded" if trade.type == Trade.Type.WITHDRAW else ""
    return f"{ended} item(s) ended{refunded}."


RETRY_PURCHASE = StaffOperation(
    name="retry_purchase",
    label="Retry the purchase",
    permission="trading.retry_purchase",
    explanation=(
        "A worker buys now what this approved withdrawal has not bought yet, as the purchase "
        "sweep would two minutes after its last move. Each item is bought under its own key, "
        "so nothing is bought twice; an item the marketplace refuses fails and is refunded."
    ),
    perform=_retry,
    offered=lambda trade: trade.type == Trade.Type.WITHDRAW and trade.status == Status.PENDING,
)
CANCEL_TRADE = StaffOperation(
    name="cancel_trade",
    label="Cancel the trade",
    permission="trading.cancel_trade",
    explanation=(
        "A withdrawal's undelivered items end now and their money goes back to the merchant's "
        "balance (initiated ones fail with CANCELED_BY_STAFF, bought ones are canceled; nothing "
        "is asked of the supplier). A deposit ends only while its offer is not out yet. The "
        "merchant gets the webhook of each change."
    ),
    perform=_cancel,
    offered=lambda trade: trade.status in IN_FLIGHT and trade.status != Status.HOLD,
)


@admin.register(Trade)
class TradeAdmin(StaffOperationsAdmin):
    ordering = ("-created_at", "-id")
    list_display = [
        "id",
        "status",
        "total_price",
        "type",
        "source",
        merchant_column,
        "created",
        "game",
        "external_id",
    ]
    list_filter = [
        OverdueFilter,
        "type",
        "source",
        "status",
        GameFilter,
        "is_quick",
        ("created_at", admin.DateFieldListFilter),
    ]
    # Whatever a merchant or the platform quotes: a deposited item's id is <game>_<asset id>,
    # so an asset id finds its deposit; offers are the trade's (sent, and a deposit's own from
    # its creation on) and each item's.
    search_fields = [
        "id",
        "external_id",
        "offer_id",
        "offer_ref",
        "client_platform_id",
        "merchant__name",
        "items__public_id",
        "items__external_id",
        "items__offer_id",
    ]
    search_help_text = (
        "Trade id or external id, asset or item id, item external id, offer id, "
        "the client's platform id or the merchant's name."
    )
    list_select_related = ["merchant"]
    # Over millions of trades: the list's page from the newest-first index (``trade_newest``),
    # the total of the unfiltered list from the statistics, no "N total" beside a filtered
    # count, and the creation date as a filter (today, this week, ...) rather than Django's
    # date hierarchy, which asks the table for every month it holds.
    paginator = EstimatedCountPaginator
    show_full_result_count = False
    change_form_template = "admin/trading/trade/change_form.html"
    staff_operations = (RETRY_PURCHASE, CANCEL_TRADE)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="created", ordering="created_at")
    def created(self, trade: Trade) -> Any:
        return console_time(trade.created_at)

    # The page renders the trade itself (trade_page); Django's form has nothing to show.
    def get_fields(self, request: HttpRequest, obj: Any = None) -> tuple[()]:
        return ()

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> list[Any]:
        return []

    def render_change_form(
        self,
        request: HttpRequest,
        context: dict[str, Any],
        add: bool = False,
        change: bool = False,
        form_url: str = "",
        obj: Any = None,
    ) -> HttpResponse:
        if obj is not None:
            context.update(trade_page_context(trade_record_get(trade=obj), request))
        return super().render_change_form(request, context, add, change, form_url, obj)
