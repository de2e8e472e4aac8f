"""Faultline: local, offline diagnosis of failed (distributed) ML training runs."""

from __future__ import annotations

__version__ = "0.1.0"
