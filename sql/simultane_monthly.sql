-- simultane_monthly: one row per human and month of the Simultané (simultane.md, "Monthly
-- indicators"), ranked by Indice.
--
-- Indice and Victoire (with the completed tournaments and wins they count) are those of the
-- month's last evening in simultane_daily: the rule lives there. A human who took part in the
-- month without completing a tournament has 0. % actuel is the player's as of the month's end
-- (or of the latest data, for the current month), with the k results it used and whether it is
-- representative. Equal Indices share the rank, and equal Victoires theirs (rank_victoire: the
-- platform's second monthly ranking).
--
-- Inputs: simultane_pct_actuel (one row per human who took part in the month: month,
-- player_id, pct_actuel, k, representative), simultane_daily (its month-end rows).

with

players as (
    select
        month,
        player_id,
        pct_actuel,
        k,
        representative
    from simultane_pct_actuel
),

month_end as (
    select
        month,
        player_id,
        indice,
        victoire,
        tournaments,
        wins
    from simultane_daily
    qualify date = max(date) over (partition by month, player_id)
),

indicators as (
    select
        players.month,
        players.player_id,
        coalesce(month_end.indice, 0) as indice,
        coalesce(month_end.victoire, 0) as victoire,
        coalesce(month_end.tournaments, 0) as tournaments,
        coalesce(month_end.wins, 0) as wins,
        players.pct_actuel,
        players.k,
        players.representative
    from players
    left join month_end
        on players.month = month_end.month
        and players.player_id = month_end.player_id
),

final as (
    select
        month,
        player_id,
        indice,
        victoire,
        tournaments,
        wins,
        pct_actuel,
        k,
        representative,
        rank() over (partition by month order by indice desc) as rank_indice,
        rank() over (partition by month order by victoire desc) as rank_victoire
    from indicators
)

select * from final
order by month, rank_indice, player_id
