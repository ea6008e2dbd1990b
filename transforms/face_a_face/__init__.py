"""Face-à-Face (contrée): matches, time rules, match points, Elo and the monthly ranking.

Pipeline order: `score_matches(inputs, opts)` -> `FaceAFaceScores` (one or more months) →
`elo_history` (ALL scored history) →
`with_elo` (ff_matches with Elo and values) → `monthly_ranking`.
"""

from transforms.face_a_face.elo import elo_history, elo_ratings, with_elo
from transforms.face_a_face.matches import FaceAFaceScores, score_matches
from transforms.face_a_face.options import FaceAFaceOptions
from transforms.face_a_face.ranking import monthly_ranking

__all__ = [
    "FaceAFaceOptions",
    "FaceAFaceScores",
    "elo_history",
    "elo_ratings",
    "monthly_ranking",
    "score_matches",
    "with_elo",
]
