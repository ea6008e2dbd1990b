"""Face-à-Face (contrée): matches, time rules, match points, Elo and the monthly ranking.

Pipeline order: `score_matches(inputs, opts)` -> `FaceAFaceScores` (one or more months) →
`elo_history` (ALL scored history) →
`with_elo` (ff_matches with Elo and values) → `monthly_ranking`.
"""

import importlib

# each name from its module, imported when first used: the options (read by the settings)
# load no Polars
_WHERE = {
    "elo_history": "elo",
    "elo_ratings": "elo",
    "with_elo": "elo",
    "FaceAFaceScores": "matches",
    "score_matches": "matches",
    "FaceAFaceOptions": "options",
    "monthly_ranking": "ranking",
}


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "FaceAFaceOptions",
    "FaceAFaceScores",
    "elo_history",
    "elo_ratings",
    "monthly_ranking",
    "score_matches",
    "with_elo",
]
