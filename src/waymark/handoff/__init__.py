"""The handoff: checkpoints and their revisions, evidence, the session ledger, and the
Stop rule that asks for a checkpoint."""
