"""The market: listings searched and shown (priced with each merchant's fee), the price book,
suggestions, and the feed's ``market`` events when listings change."""
