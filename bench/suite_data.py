"""The suite's data. At scale, built once and reused: the market (50,000 items, 1,000,000
listings), 1,000,000 trades and 100,000 ledger rows. Per run, fresh: the merchants, clients and
request lines, so a run's writes never meet an earlier run's (deposit guards, bought listings).
"""

import json
import random
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from urllib.parse import quote

from harness import Request
from market import SEARCHES, SORTS, seed_if_needed
from tradedata import (
    TRADE_URL,
    buy_requests,
    buyers,
    copy_value,
    loaded_merchants,
    trade_history,
    untaken_listings,
)

LEDGER_MERCHANTS = 10
LEDGER_ROWS_PER_MERCHANT = 10_000
PLATFORM_BASE = 76561197960265728
READERS = 20
CLIENTS_PER_READER = 10
DEPOSITORS = 4
DEPOSIT_CLIENTS = 2_000
DEPOSIT_ITEMS_PER_CLIENT = 3  # under the guard's 5 active deposits per user
WRK_THREADS = 2  # harness.drive's default: each wrk thread starts half-way through the lines


@dataclass(frozen=True)
class Scale:
    trades: list[tuple[str, list[str]]]  # (api key, [cursor 10,000 deep, cursor 90,000 deep])
    ledger: list[tuple[str, list[str]]]  # (LEDGER_READ api key, some of its funding ids)
    merchant_ids: list[str]


def build_scale() -> Scale:
    """Seeds what is missing, reports what it did."""
    from merchants.models import Merchant

    print(seed_if_needed(), flush=True)
    started = time.perf_counter()
    trades = trade_history()
    print(f"trade history ready in {time.perf_counter() - started:.1f} s", flush=True)
    started = time.perf_counter()
    ledger = ledger_history()
    print(f"ledger ready in {time.perf_counter() - started:.1f} s", flush=True)
    ids = Merchant.objects.filter(name__regex=r"^bench (history|ledger) \d+$").values_list(
        "id", flat=True
    )
    return Scale(trades=trades, ledger=ledger, merchant_ids=[str(i) for i in ids])


def ledger_history() -> list[tuple[str, list[str]]]:
    """Ten merchants with 10,000 fundings each (100,000 in all), loaded with COPY once."""
    from ledger.models import Funding
    from merchants.models import Scope
    from merchants.services import api_key_create

    made = []
    for merchant in loaded_merchants(
        "bench ledger", LEDGER_MERCHANTS, _copy_fundings, "ledger_funding"
    ):
        _, key = api_key_create(merchant=merchant, scopes=[Scope.LEDGER_READ])
        ids = Funding.objects.filter(merchant=merchant).order_by("id").values_list("id", flat=True)
        made.append((key, [str(i) for i in ids[:200]]))
    return made


def _copy_fundings(merchants: list) -> None:  # type: ignore[type-arg]
    """Deposits, withdrawals and refunds of every status over the last year."""
    from django.db import connection
    from django.utils import timezone

    from ledger.models import Funding

    started = time.perf_counter()
    rng = random.Random(730)
    now = timezone.now()
    kinds = [Funding.Type.DEPOSIT, Funding.Type.WITHDRAWAL, Funding.Type.REFUND]
    fields = list(Funding._meta.concrete_fields)
    columns = ", ".join(f.column for f in fields)
    with (
        connection.cursor() as cursor,
        cursor.cursor.copy(f"COPY ledger_funding ({columns}) FROM STDIN") as copy,
    ):
        for merchant in merchants:
            for n in range(LEDGER_ROWS_PER_MERCHANT):
                created = now - timedelta(seconds=rng.randrange(365 * 86400))
                status = rng.choice(Funding.Status.values)
                amount = Decimal(rng.randrange(100, 1_000_000)) / 100
                values = {
                    "id": uuid.uuid4(),
                    "merchant": merchant.pk,
                    "type": rng.choice(kinds),
                    "status": status,
                    "amount_usd": amount,
                    "amount_crypto": amount,
                    "token": "USDT",
                    "chain": "ETH",
                    "fee": Decimal("0.50"),
                    "address": f"0x{rng.getrandbits(160):040x}",
                    "txn_hash": f"0x{rng.getrandbits(256):064x}",
                    "source_type": "bench",
                    "source_id": f"ledger-{merchant.pk}-{n}",
                    "created_at": created,
                    "updated_at": created,
                    "completed_at": created if status == Funding.Status.COMPLETED else None,
                }
                copy.write_row([copy_value(f, values) for f in fields])
    total = LEDGER_ROWS_PER_MERCHANT * len(merchants)
    print(f"loaded {total} ledger rows in {time.perf_counter() - started:.1f} s", flush=True)


@dataclass(frozen=True)
class Client:
    merchant_id: str
    token: str
    platform_id: str


@dataclass(frozen=True)
class Seller:
    """A merchant of this run: id, CORE_ACCESS key, withdraw fee rate, its clients."""

    id: str
    key: str
    fee: Decimal
    clients: list[Client]


def _merchant(name: str, callback_url: str, funds: Decimal, clients: list[int]) -> Seller:
    """A verified merchant whose callback URL is the bench receiver, with clients (partner
    numbers; platform id = PLATFORM_BASE + partner)."""
    from merchants.models import Scope
    from merchants.services import (
        ClientData,
        api_key_create,
        client_authenticate,
        merchant_create,
    )
    from wallet.services import wallet_admin_credit

    merchant = merchant_create(name=name, is_verified=True, callback_url=callback_url)
    _, key = api_key_create(merchant=merchant, scopes=[Scope.CORE_ACCESS])
    if funds:
        wallet_admin_credit(merchant=merchant, amount=funds, reason="bench")
    made = []
    for partner in clients:
        platform_id = str(PLATFORM_BASE + partner)
        token = client_authenticate(
            merchant=merchant,
            platform_id=platform_id,
            trade_url=TRADE_URL.format(partner),
            client_id=None,
            client_data=ClientData(),
        )
        made.append(Client(str(merchant.pk), token, platform_id))
    return Seller(str(merchant.pk), key, merchant.withdraw_fee_rate, made)


@dataclass(frozen=True)
class Cast:
    """Who plays in one run."""

    prefix: str
    readers: list[Seller]  # funded; their clients read, withdraw, ask for crypto addresses
    depositors: list[Seller]  # their clients deposit
    buyers: list[tuple[str, Decimal]]  # trading.buyers: (api key, fee)

    @property
    def clients(self) -> list[Client]:
        return [c for r in self.readers for c in r.clients]

    def merchant_ids(self) -> list[str]:
        from merchants.models import Merchant

        ids = Merchant.objects.filter(name__startswith=self.prefix).values_list("id", flat=True)
        return [str(i) for i in ids]


def cast_create(*, prefix: str, callback_url: str) -> Cast:
    started = time.perf_counter()
    readers = [
        _merchant(
            f"{prefix} reader {n}",
            callback_url,
            Decimal(10_000_000),
            [10_000 + n * CLIENTS_PER_READER + c for c in range(CLIENTS_PER_READER)],
        )
        for n in range(READERS)
    ]
    per = DEPOSIT_CLIENTS // DEPOSITORS
    depositors = [
        _merchant(
            f"{prefix} depositor {n}",
            callback_url,
            Decimal(0),
            [500_000 + n * per + c for c in range(per)],
        )
        for n in range(DEPOSITORS)
    ]
    cast = Cast(prefix, readers, depositors, buyers(20, prefix=f"{prefix} buyer"))
    print(f"merchants and clients of this run made in {time.perf_counter() - started:.1f} s")
    return cast


def crypto_addresses_allocate(cast: Cast) -> None:
    """Each reader client's deposit addresses exist already (the bench reads them, as a user
    polling its address page does; the first derivation is a one-off)."""
    from crypto.services.addresses import allocation_get
    from merchants.models import Merchant

    merchants = {str(m.pk): m for m in Merchant.objects.filter(pk__in=[r.id for r in cast.readers])}
    for client in cast.clients:
        allocation_get(merchant=merchants[client.merchant_id], platform_id=client.platform_id)


def inventories_warm(cast: Cast) -> None:
    """Fetch each user's inventory once, as a user opening the deposit page would."""
    from merchants.models import Merchant
    from trading.accounts.selectors.inventory import inventory_assets

    merchants = {str(m.pk): m for m in Merchant.objects.filter(pk__in=[r.id for r in cast.readers])}
    for client in cast.clients:
        inventory_assets(
            merchant=merchants[client.merchant_id], platform_id=client.platform_id, game=730
        )


def price_books_warm(cast: Cast) -> None:
    """Build the first game's book for the readers' fee and margin, as the first merchant to
    ask after a deploy would: the scenario measures serving the book, not building it (a build
    of 50,000 items takes seconds; ``bench/README.md`` gives its time and memory)."""
    from merchants.models import Merchant
    from trading.market.rendered.prices import price_book_get

    for merchant in Merchant.objects.filter(pk__in=[r.id for r in cast.readers]):
        price_book_get(merchant=merchant, game=730)


def _bearer(client: Client) -> dict[str, str]:
    return {"Authorization": f"Bearer {client.token}"}


def baseline_lines(cast: Cast) -> list[Request]:
    return [Request("GET", "/sandbox/clock", {"api-key": r.key}) for r in cast.readers]


def authenticate_lines(cast: Cast, clients: int = 10_000) -> list[Request]:
    """One of 10,000 end users per request, over the reader merchants."""
    lines = []
    for n in range(clients):
        partner = 1_000_000 + n
        body = json.dumps(
            {
                "clientPlatformId": str(PLATFORM_BASE + partner),
                "clientTradeUrl": TRADE_URL.format(partner),
                "clientData": {"totalWager": 1200.50, "kycLevel": 2},
            }
        )
        key = cast.readers[n % len(cast.readers)].key
        lines.append(Request("POST", "/auth/authenticate-client", {"api-key": key}, body))
    return lines


def balance_lines(cast: Cast) -> list[Request]:
    return [Request("GET", "/v1/wallets/me/balance", {"api-key": r.key}) for r in cast.readers]


def secure_market_lines(cast: Cast) -> list[Request]:
    """The market search of the client market's scenario (13 terms x 5 sorts), asked by the
    merchants in turn with their keys."""
    combos = [(term, sort) for term in SEARCHES for sort in SORTS] * 4
    return [
        Request(
            "GET",
            f"/secure/market?search={quote(term)}&sort={sort}",
            {"api-key": cast.readers[n % len(cast.readers)].key},
        )
        for n, (term, sort) in enumerate(combos)
    ]


def prices_lines(cast: Cast) -> list[Request]:
    return [Request("GET", "/secure/prices", {"api-key": r.key}) for r in cast.readers]


def market_search_lines(cast: Cast) -> list[Request]:
    """13 terms x 5 sorts, each asked by the clients of every merchant in turn."""
    clients = cast.clients
    combos = [(term, sort) for term in SEARCHES for sort in SORTS] * 4
    return [
        Request(
            "GET",
            f"/client/market?search={quote(term)}&sort={sort}",
            _bearer(clients[n % len(clients)]),
        )
        for n, (term, sort) in enumerate(combos)
    ]


def market_item_lines(cast: Cast) -> list[Request]:
    """The 500 most listed first-game items, each asked by a merchant in turn."""
    from trading.models import CatalogItem

    items = CatalogItem.objects.filter(game=730).order_by("-popularity", "id")[:500]
    return [
        Request(
            "GET",
            f"/secure/market/item?itemId={quote(item.id)}",
            {"api-key": cast.readers[n % len(cast.readers)].key},
        )
        for n, item in enumerate(items)
    ]


def inventory_lines(cast: Cast) -> list[Request]:
    return [Request("GET", "/client/inventory", _bearer(c)) for c in cast.clients]


def crypto_address_lines(cast: Cast) -> list[Request]:
    return [
        Request("GET", "/client/crypto/deposit-address?chain=ETH", _bearer(c)) for c in cast.clients
    ]


def trades_lines(scale: Scale, depth: int | None) -> list[Request]:
    """Page 1 of each history merchant's trades, or the page ``depth`` (0: 10,000 deep, 1:
    90,000 deep) of its keyset cursor."""
    return [
        Request(
            "GET",
            "/secure/trades?limit=20" + (f"&cursor={cursors[depth]}" if depth is not None else ""),
            {"api-key": key},
        )
        for key, cursors in scale.trades
    ]


def ledger_list_lines(scale: Scale) -> list[Request]:
    return [Request("GET", "/v1/ledger/transactions", {"api-key": key}) for key, _ in scale.ledger]


def ledger_lookup_lines(scale: Scale) -> list[Request]:
    return [
        Request("GET", f"/v1/ledger/transactions/{funding_id}", {"api-key": key})
        for key, ids in scale.ledger
        for funding_id in ids
    ]


def spread_count(users: int, lines: int) -> int:
    """The largest odd multiple of ``users`` up to ``lines``: with line n going to user
    n % users, the two wrk threads (each starting at its half of the lines) are then users/2
    users apart and never send for the same user at once."""
    multiple = lines // users
    return users * (multiple if multiple % 2 else multiple - 1)


def deposit_lines(cast: Cast) -> list[Request]:
    """Up to three deposits per depositing client, one accepted inventory item each at the
    price its merchant offers now; the first round goes through every client before the
    second starts. Warms the inventories."""
    from merchants.models import Merchant
    from trading.accounts.selectors.inventory import deposit_quotes, inventory_assets

    merchants = {
        str(m.pk): m for m in Merchant.objects.filter(pk__in=[d.id for d in cast.depositors])
    }
    offers: list[list[Request]] = []
    for depositor in cast.depositors:
        merchant = merchants[depositor.id]
        for client in depositor.clients:
            assets = inventory_assets(merchant=merchant, platform_id=client.platform_id, game=730)
            quotes = deposit_quotes(assets=assets, merchant=merchant, game=730)
            accepted = [q for q in quotes if not q.refusal][:DEPOSIT_ITEMS_PER_CLIENT]
            offers.append(
                [
                    Request(
                        "POST",
                        "/client/trading/deposit",
                        _bearer(client),
                        json.dumps({"items": [{"itemId": q.item_id, "price": float(q.price)}]}),
                    )
                    for q in accepted
                ]
            )
    return [
        requests[round_]
        for round_ in range(DEPOSIT_ITEMS_PER_CLIENT)
        for requests in offers
        if round_ < len(requests)
    ]


def withdraw_lines(cast: Cast, listings: list[tuple[str, Decimal]]) -> list[Request]:
    """Each listing withdrawn once by a reader client, at its merchant's fee-inclusive price;
    no user is sent twice at once (a second concurrent withdrawal would get 20)."""
    from trading.pricing import fee_inclusive

    fees = {r.id: r.fee for r in cast.readers}
    clients = cast.clients
    lines = []
    for n, (listing_id, price) in enumerate(listings[: spread_count(len(clients), len(listings))]):
        client = clients[n % len(clients)]
        body = json.dumps(
            {
                "items": [
                    {
                        "itemId": listing_id,
                        "price": float(fee_inclusive(price, fees[client.merchant_id])),
                    }
                ]
            }
        )
        lines.append(Request("POST", "/client/trading/withdraw", _bearer(client), body))
    return lines


def buy_lines(cast: Cast, listings: list[tuple[str, Decimal]]) -> list[Request]:
    return buy_requests(cast.buyers, listings)


def listings_for_writes(buys: int, withdrawals: int) -> tuple[list, list]:  # type: ignore[type-arg]
    """Listings no trade has taken: the first ``buys`` for secure buy, the next for clients."""
    listings = untaken_listings(buys + withdrawals)
    return listings[:buys], listings[buys:]
