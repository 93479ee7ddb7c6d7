"""The market's reads that return bodies rendered and cached as JSON, measured to need it: market
pages (bench/README.md) and the price book (6 MB for the first game; its module says why)."""
