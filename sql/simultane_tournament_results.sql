-- simultane_tournament_results: one row per participant and tournament, the bot included
-- (simultane.md, "Tournament result, winner").
--
-- A participant's result is the sum of their points over the tournament's scored deals; `top`
-- sums the tops of those deals, and mp_pct = 100 · points / top (null when no deal was
-- scored). Equal results share a rank; rank 1 wins: co-winners all win, and when the bot has
-- the best result alone no human wins. A participation is completed when it has a row for
-- every one of the tournament's deals and no deal with status `quit`.
--
-- Input: simultane_deal_results (the scored deals; one row per tournament, deal, player).

with

deal_results as (
    select
        tournament_id,
        month,
        tournament_start,
        deals_in_tournament,
        player_id,
        is_bot,
        status,
        points,
        top
    from simultane_deal_results
),

participations as (
    select
        tournament_id,
        player_id,
        any_value(month) as month,
        any_value(tournament_start) as tournament_start,
        any_value(is_bot) as is_bot,
        coalesce(sum(points), 0)::bigint as points,
        coalesce(sum(top), 0)::bigint as top,
        count(*) as deals_played,
        max(deals_in_tournament) as deals_in_tournament,
        coalesce(bool_or(status = 'quit'), false) as quit
    from deal_results
    group by tournament_id, player_id
),

final as (
    select
        tournament_id,
        month,
        tournament_start,
        player_id,
        is_bot,
        points,
        top,
        case when top > 0 then 100::double * points / top end as mp_pct,
        deals_played,
        rank() over (partition by tournament_id order by points desc) as rank,
        rank = 1 as is_winner,
        deals_played = deals_in_tournament and not quit as completed
    from participations
)

select * from final
order by tournament_id, rank, player_id
