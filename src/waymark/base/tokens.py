"""Token estimates for budgets: cheap, deterministic, a little pessimistic.

About four characters a token for English and code; no tokenizer on the hook path.
"""

from __future__ import annotations


def estimate(text: str) -> int:
    """Estimated tokens of `text` (ceil of characters / 4, plus one a line break)."""
    return (len(text) + 3) // 4 + text.count("\n") // 4
