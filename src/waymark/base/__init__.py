"""Small things every wing uses: the clock and ids, atomic private files, text, token
estimates, JSON for the hook path, secret redaction."""
