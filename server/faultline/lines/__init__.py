"""Reading one log line: clean text (normalize), the rank, host and time its prefixes state (prefixes,
timestamps), and what its bytes alone determine, cached (cache)."""
