"""A minimal Django + DRF app: the limits every endpoint of the service is measured against."""

# Accounts, one per api key ``limit-key-<n>``; bench/limits.py creates their rows. Account n's
# second account (the buy limit's locked money) is ``ACCOUNTS + n``.
ACCOUNTS = 64
# Listings the buy limits buy (``listing-<n>``), each with stock enough for every run: the
# pipeline limit's purchases take one unit, and each request of a load names another listing.
LISTINGS = 100_000
# Rows per account in the page limit's table: deeper than one page.
PAGE_ROWS_PER_ACCOUNT = 200
PAGE_SIZE = 20
# The page limit's 35 columns (beside ``id`` and ``account_id``, which are two of them): as wide
# and as mixed as a trade page's trade and item columns together.
PAGE_COLUMNS = (
    [("id", "bigint"), ("account_id", "integer")]
    + [(f"text_{n}", "text") for n in range(12)]
    + [(f"amount_{n}", "numeric(20, 2)") for n in range(6)]
    + [(f"at_{n}", "timestamptz") for n in range(5)]
    + [(f"number_{n}", "integer") for n in range(5)]
    + [(f"uuid_{n}", "uuid") for n in range(3)]
    + [("flag", "boolean"), ("details", "jsonb")]
)
assert len(PAGE_COLUMNS) == 35
