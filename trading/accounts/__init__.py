"""A platform account as the domain sees it: its inventory (fetched through the game platform,
cached, priced with the merchant's deposit offers), its trade URL's check, the bot fleet's
state, and a client's instant-deposit collateral."""
