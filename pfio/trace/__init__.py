"""pfio.trace: IO timing and counting (being built; see issue 6)."""
