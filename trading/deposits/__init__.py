"""Deposits: an owner's items sold to the service (client deposits and self sells), from the
request through the bot's offer to the hold's end. ``services/`` by concern: the guard, the
pricing, storing under the locks, the offer's steps, the outcomes with their money."""
