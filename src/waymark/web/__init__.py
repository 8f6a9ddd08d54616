"""The dashboard (#26): a local web face over the library, for people (`waymark ui`)."""
