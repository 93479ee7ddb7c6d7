"""Real supplier marketplaces (Waxpeer, DMarket) behind the domain's marketplace interface:
each supplier's client (``waxpeer``, ``dmarket``), what they share (``base``, ``http``), and the
marketplace that routes between them over the local snapshot of their listings
(``marketplace``). docs/suppliers.md tells the whole story."""
