"""Waymark: memory for coding agents."""

__version__ = "0.2.0"  # the one place; pyproject.toml and both plugin manifests read or match it
