"""A trade's page as a person reads it (templates/admin/trading/trade/change_form.html): a
summary of who, what, how much, its state and age; its items with their names and where each
comes from; one timeline of its moves, staff actions, webhooks and money; its webhooks with
their attempts, linked; and only the fields that hold something. Every time is real time, with
the sandbox's service clock beside it (``core.admin_display.console_time``)."""

from dataclasses import dataclass, fields
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import models
from django.http import HttpRequest
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.safestring import SafeString

from core import clock
from core.admin_display import console_age, console_time, json_block
from trading.games import CS_GAME, RUST_GAME
from trading.models import IN_FLIGHT, Status, Trade, TradeItem
from trading.selectors.attention import expected_minutes
from trading.selectors.trade_record import TradeRecord

GAME_NAMES = {CS_GAME: "Counter-Strike 2 (730)", RUST_GAME: "Rust (252490)"}
KINDS: dict[str, str] = {Trade.Type.WITHDRAW: "Withdrawal", Trade.Type.DEPOSIT: "Deposit"}
# Moments at the same instant read in the order they are caused: a move, the staff action that
# made it, the money it moved, the webhook that told the merchant.
ORDER = {"move": 0, "staff": 1, "money": 2, "webhook": 3}
# Shown in the summary or the items, so not again among the other fields.
SUMMARIZED = {
    "id",
    "merchant",
    "client",
    "type",
    "source",
    "status",
    "game",
    "is_quick",
    "external_id",
    "client_platform_id",
    "total_price",
    "created_at",
    "updated_at",
    "next_sequence",
}


@dataclass(frozen=True)
class Moment:
    """One line of the timeline."""

    at: datetime
    kind: str  # move | staff | webhook | money
    actor: str
    what: str
    detail: str = ""
    url: str = ""


def _empty(value: Any) -> bool:
    return value in (None, "", {}, []) or value is False or value == Decimal(0)


def _shown(value: Any) -> SafeString | str:
    if isinstance(value, datetime):
        return console_time(value) or ""
    if isinstance(value, dict | list):
        return json_block(value) or ""
    return str(value)


def _admin_url(model: str, pk: object) -> str:
    return reverse(f"admin:{model}_change", args=[pk])


def other_fields(trade: Trade) -> list[tuple[str, SafeString | str]]:
    """The trade's remaining fields that hold something, as (label, shown value)."""
    shown = []
    for field in trade._meta.fields:
        if field.name in SUMMARIZED:
            continue
        value = getattr(trade, field.attname)
        if isinstance(field, models.ForeignKey) or _empty(value):
            continue
        shown.append((str(field.verbose_name), _shown(value)))
    return shown


def summary(record: TradeRecord) -> dict[str, Any]:
    trade = record.trade
    kind = f"{KINDS[trade.type]} ({trade.source}{', quick' if trade.is_quick else ''})"
    waiting_key = f"{trade.type}.{trade.status}"
    overdue = ""
    if trade.status in IN_FLIGHT:
        since = trade.hold_end_date if trade.status == Status.HOLD else trade.updated_at
        minutes = expected_minutes(waiting_key)
        if since is not None and (clock.now() - since).total_seconds() > minutes * 60:
            overdue = f"past its expected time ({minutes} min in {trade.status})"
    return {
        "kind": kind,
        "game": GAME_NAMES.get(trade.game, str(trade.game)),
        "merchant_url": _admin_url("merchants_merchant", trade.merchant_id),
        "client_url": _admin_url("merchants_client", trade.client_id) if trade.client_id else "",
        "created": console_time(trade.created_at),
        "age": console_age(trade.created_at),
        "last_move": console_time(trade.updated_at),
        "last_move_age": console_age(trade.updated_at),
        "overdue": overdue,
        "items": len(record.items),
        "locked": sum((item.locked for item in record.items), Decimal("0.00")),
    }


def item_rows(record: TradeRecord) -> list[dict[str, Any]]:
    rows = []
    for item in record.items:
        source = record.sources[item.pk]
        details = item.details if isinstance(item.details, dict) else {}
        rows.append(
            {
                "item": item,
                "name": item_name(item),
                "market_hash_name": details.get("marketHashName", ""),
                "source": source,
                "bot_url": _admin_url("trading_steambot", source.bot_id) if source.bot_id else "",
                "hold_end": console_time(item.hold_end_date),
                "cancel_requested": console_time(item.cancel_requested_at),
            }
        )
    return rows


def item_name(item: TradeItem) -> str:
    details = item.details if isinstance(item.details, dict) else {}
    return str(details.get("name") or details.get("marketHashName") or item.public_id)


def _event_text(event: Any) -> tuple[str, str]:
    moved = (
        f"{event.from_status} → {event.to_status}"
        if event.from_status != event.to_status
        else event.to_status
    )
    item = f"#{event.item.position} {item_name(event.item)}: " if event.item is not None else ""
    what = f"{event.kind.replace('_', ' ')} · {item}{moved}"
    detail = event.detail if isinstance(event.detail, dict) else {}
    return what, ", ".join(f"{k}: {v}" for k, v in detail.items())


def timeline(record: TradeRecord) -> list[dict[str, Any]]:
    trade = record.trade
    creator = "merchant" if trade.source == Trade.Source.SELF else "client"
    moments = [
        Moment(
            trade.created_at,
            "move",
            creator,
            f"created · {Status.INITIATED}",
            f"{len(record.items)} item(s), {trade.total_price} USD",
        )
    ]
    for event in record.events:
        what, detail = _event_text(event)
        moments.append(Moment(event.created_at, "move", event.actor, what, detail))
    for action in record.staff_actions:
        facts = ", ".join(f"{k}: {v}" for k, v in action.detail.items())
        moments.append(
            Moment(
                action.created_at,
                "staff",
                f"staff:{action.user}",
                action.action.replace("_", " "),
                f"reason: {action.reason}" + (f" ({facts})" if facts else ""),
            )
        )
    for hook in record.webhooks:
        moments.append(
            Moment(
                hook.created_at,
                "webhook",
                "service",
                f"webhook #{hook.sequence} {hook.type}",
                f"{hook.status} after {hook.attempts} attempt(s)",
                _admin_url("merchants_webhookevent", hook.pk),
            )
        )
    for transfer in record.transfers:
        legs = ", ".join(f"{p.account.kind} {p.amount:+}" for p in transfer.postings.all())
        moments.append(
            Moment(
                transfer.created_at,
                "money",
                "wallet",
                transfer.kind,
                legs,
                _admin_url("wallet_transfer", transfer.pk),
            )
        )
    moments.sort(key=lambda moment: (moment.at, ORDER[moment.kind]))
    return [
        {**{f.name: getattr(m, f.name) for f in fields(m)}, "time": console_time(m.at)}
        for m in moments
    ]


def webhook_rows(record: TradeRecord, request: HttpRequest) -> list[dict[str, Any]]:
    may_resend = request.user.has_perm("merchants.resend_webhook")
    page = request.get_full_path()
    rows = []
    for event in record.webhooks:
        attempts = list(event.deliveries.all())
        last = attempts[-1] if attempts else None
        resend = ""
        if may_resend and not event.is_approval and event.status != "pending":
            resend = reverse("admin:merchants_webhookevent_staff", args=[event.pk, "resend"])
            resend = f"{resend}?{urlencode({'next': page})}"
        rows.append(
            {
                "event": event,
                "url": _admin_url("merchants_webhookevent", event.pk),
                "created": console_time(event.created_at),
                "delivered": console_time(event.delivered_at),
                "last": last,
                "last_at": console_time(last.created_at) if last else None,
                "resend_url": resend,
            }
        )
    return rows


def trade_page_context(record: TradeRecord, request: HttpRequest) -> dict[str, Any]:
    rows = item_rows(record)
    return {
        "record": record,
        "summary": summary(record),
        "item_rows": rows,
        # Item columns some item fills; the others would be empty for every row.
        "item_columns": {
            name: any(not _empty(getattr(row["item"], name)) for row in rows)
            for name in ("external_id", "sourcing_price", "locked", "offer_id", "error", "delivery")
        }
        | {
            "source": any(row["source"].supplier or row["source"].bot_platform_id for row in rows),
            "hold_end": any(row["hold_end"] for row in rows),
        },
        "timeline": timeline(record),
        "webhook_rows": webhook_rows(record, request),
        "other_fields": other_fields(record.trade),
        "sandbox": settings.SANDBOX,
    }
