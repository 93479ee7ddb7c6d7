"""The games the service trades, and the facts about them the domain relies on."""

CS_GAME = 730
RUST_GAME = 252490
GAMES = (CS_GAME, RUST_GAME)
# The phases a phased first-game finish comes in (Doppler, Gamma Doppler).
PHASES = ("Phase 1", "Phase 2", "Phase 3", "Phase 4", "Ruby", "Sapphire", "Black Pearl", "Emerald")
