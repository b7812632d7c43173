"""A lesson's self-checks: its declared attempts and the cheat set that every task
must fail."""
