-- simultane_daily: a player's Indice and Victoire of the month as they stood each evening
-- (simultane.md, "Monthly indicators"). The one place both indicators are computed:
-- simultane_monthly reads their value on the month's last evening.
--
-- Indice Duplicaté = (sum of the $indice_best best completed results of the month so far)
-- / $indice_best, always divided by $indice_best: before $indice_best results each one adds
-- result / $indice_best; later a result enters only if it beats the worst one kept.
-- Victoire Duplicaté = (sum of the $victoire_best best results among the tournaments the player
-- won) / $victoire_best, always divided by $victoire_best.
-- Completed participations of humans only (the bot has no indicators). One row per player and
-- evening with a result (the values only change then).
--
-- Input: simultane_tournament_results (with `date`: the tournament's start as a calendar day
-- in the platform time zone).

with

results as (
    select
        month,
        player_id,
        date,
        points,
        is_winner
    from simultane_tournament_results
    where not is_bot and completed
),

month_to_date as (
    -- each result with the values as of its evening: the window holds the month's results up
    -- to that day, that day's included (a range frame: results of one day are peers)
    select
        month,
        player_id,
        date,
        coalesce(list_sum(max(points, $indice_best) over so_far), 0) / $indice_best as indice,
        coalesce(list_sum(max(points, $victoire_best) filter (where is_winner) over so_far), 0)
        / $victoire_best as victoire,
        count(*) over so_far as tournaments,
        count(*) filter (where is_winner) over so_far as wins
    from results
    window so_far as (
        partition by month, player_id
        order by date
        range between unbounded preceding and current row
    )
),

evenings as (
    -- one row per evening (the results of one day carry the same values)
    select distinct on (month, player_id, date)
        date,
        month,
        player_id,
        indice,
        victoire,
        tournaments,
        wins
    from month_to_date
),

final as (
    select * from evenings
)

select * from final
order by month, player_id, date
