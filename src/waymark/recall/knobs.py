"""Recall's ranking knobs and the light record candidates are ranked on.

Kept apart from `ranked` and `fusion`, which both read them: neither imports the other's
types. A namedtuple, used as Settings(half_life_days=30, ...): hooks cannot afford
`dataclasses`.
"""

from __future__ import annotations

from waymark.base.record import record

# Title, content, tags, target. FTS5's bm25() fixes k1 = 1.2; scaling every weight by c acts
# as k1 = 1.2 / c, so x4 means k1 = 0.3: a memory is short, and saying a word twice or at
# length should count for little (dev set, lexical R@10 0.604 -> 0.646).
FTS_WEIGHTS = (16.0, 4.0, 8.0, 8.0)


# Ranking knobs, tuned on the development set (bench/retrieval.py). A namedtuple, used as
# Settings(half_life_days=30, ...): hooks cannot afford `dataclasses`.
#   *_weight             each tier's share of the fused score (semantic 0.8, expansion 0.3, ...)
#   query_terms          a longer query is searched by its rarest words
#   candidates           pool per lexical tier (lexical, fuzzy, expansion); semantic its own
#   feedback_docs        first-pass hits that expansion words are drawn from
#   expansion_max_df     a word in more of all memories says little (and costs)
#   recency_floor        an old memory keeps at least this share of its score
#   use_boost            at most +8% for a memory used often and lately
#   priority_step        per priority point, ±20% at the extremes; pin_boost on top
#   file_fit, dir_fit    the query names this memory's file, or a directory around it
#   query_max_share      words in more of all memories are not searched (hooks: 0.05)
#   fuzzy_below          typo repair runs when the words as typed found fewer memories
#   query_max_rows       words stop, rarest first, past this many postings (0: no limit)
#   branch_boost         a decision written on the branch checked out now: +15%
#   feedback_boost       net feedback on a memory moves it at most ±15% (tanh of net/2)
#   held_boost           the change a decision or lesson led to held in git: +10%
#   reverted_factor      ...or was reverted: x0.5 (shown with the flag)
#   unused_step          a memory shown 5+ times and never used loses 5% a showing...
#   unused_floor         ...down to x0.75 at most (curation/use.py measures the use)
#   when_boost           the query names a date its event time falls on (recall/when.py)
Settings = record(
    "Settings",
    "lexical_weight semantic_weight path_weight fuzzy_weight expansion_weight graph_weight"
    " query_terms candidates semantic_candidates feedback_docs expansion_terms"
    " expansion_max_df graph_seeds half_life_days recency_floor use_boost priority_step"
    " pin_boost file_fit dir_fit query_max_share fuzzy_below query_max_rows branch_boost"
    " feedback_boost held_boost reverted_factor unused_step unused_floor when_boost",
    defaults=[
        1.0,
        0.8,
        1.0,
        0.5,
        0.3,
        0.3,
        12,
        100,
        200,
        3,
        20,
        0.01,
        5,
        90.0,
        0.85,
        0.08,
        0.02,
        0.10,
        0.35,
        0.2,
        1.0,
        5,
        0,
        0.15,
        0.15,
        0.10,
        0.5,
        0.05,
        0.75,
        1.0,
    ],
)
DEFAULT = Settings()


# What the multipliers read (fusion.multipliers): enough to rank a candidate without its text.
Light = record("Light", "id type priority pinned scope_type scope_target event_time git_branch")
