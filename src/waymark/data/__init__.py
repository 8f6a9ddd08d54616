"""Your data, portable and safe: backups and restores, export and import."""
