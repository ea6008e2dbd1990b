"""Simultané individuel (contrée): per-deal % vs the bot and matchpoints, tournament results,
20-deal blocks and % actuel, monthly and daily Indice and Victoire (spec: simultane.md).

Entry point: `tournaments.score_tournaments(inputs, opts)` -> `SimultaneScores` (deal and
tournament results, data issues); then, over the history, `blocks.blocks`, `monthly.monthly`
and `monthly.daily`. The analysts' rules run as SQL models (`sql/simultane_*.sql`).
"""
