"""Trading's pages of the staff console, by concern: the trades (their list, each trade's
readable page and the staff actions on a trade), the bots, the suppliers, the catalog and the
games, the merchant page's trading sections, and trading's sections of the home."""

from trading.admin import board, bots, catalog, panels, suppliers, trades  # noqa: F401
