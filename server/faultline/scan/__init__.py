"""The streaming scan: log bytes in chunks, candidate lines found by a keyword prefilter, read into events."""
