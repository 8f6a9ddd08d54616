"""Health: `waymark status` and `waymark doctor`."""
