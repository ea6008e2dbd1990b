-- ff_monthly_ranking: one row per player and month of the Face-à-Face tournament.
--
-- Points = (best $best_per_category values of the Attaque category + best of Classique)
-- / $divisor, always divided by $divisor (face_a_face.md, "Tournament points"). Both attack
-- types form one category when $pool_attack_types. Only matches that count for the ranking
-- give values (one ranked match per month, players and type; forfeits 0 for the forfeiter).
-- A player is ranked when one of their matches counts; the Bot never is. `matches` counts all
-- the matches they played that month (ranked or not). `elo` is the rating after their last
-- rated match ending by the end of the month (platform time zone), $elo_start if none.
-- Ties in points (shown at $points_decimals) share the rank.
--
-- Inputs: ff_matches (with value_a, value_b), ff_elo (all history up to those months).

with

matches as (
    select
        month,
        match_id,
        match_type,
        player_a,
        player_b,
        counts_for_ranking,
        value_a,
        value_b
    from ff_matches
    where status <> 'cancelled'
),

elo as (
    select
        player_id,
        ended_at,
        elo_seq,
        elo_after
    from ff_elo
),

sides as (
    select
        month,
        match_id,
        match_type,
        player_a as player_id,
        counts_for_ranking,
        value_a as value
    from matches
    union all
    select
        month,
        match_id,
        match_type,
        player_b as player_id,
        counts_for_ranking,
        value_b as value
    from matches
),

player_matches as (
    select
        month,
        match_id,
        player_id,
        counts_for_ranking,
        value,
        case
            when match_type = 'classique' then 'classique'
            when $pool_attack_types then 'attaque'
            else match_type
        end as category
    from sides
    where player_id <> $bot_id
),

played as (
    select
        month,
        player_id,
        count(*) as matches
    from player_matches
    group by month, player_id
),

slots as (
    select
        month,
        player_id,
        category,
        value,
        row_number() over (
            partition by month, player_id, category
            order by value desc, match_id
        ) as slot
    from player_matches
    where counts_for_ranking
),

totals as (
    select
        month,
        player_id,
        round(sum(value) / $divisor, $points_decimals) as points,
        count(*) filter (where category = 'attaque') as attaque_counted,
        count(*) filter (where category = 'classique') as classique_counted,
        count(*) filter (where category = 'attaque_surcontrat') as surcontrat_counted
    from slots
    where slot <= $best_per_category
    group by month, player_id
),

elo_by_month as (
    select
        player_id,
        strftime(timezone($timezone, ended_at), '%Y-%m') as end_month,
        arg_max(elo_after, elo_seq) as elo
    from elo
    group by player_id, end_month
),

month_end_elo as (
    -- the last end month (≤ the ranking month) in which the player's rating changed
    select
        totals.month,
        totals.player_id,
        elo_by_month.elo
    from totals
    inner join elo_by_month
        on totals.player_id = elo_by_month.player_id
        and elo_by_month.end_month <= totals.month
    qualify row_number() over (
        partition by totals.month, totals.player_id
        order by elo_by_month.end_month desc
    ) = 1
),

with_elo as (
    select
        totals.month,
        totals.player_id,
        totals.points,
        coalesce(month_end_elo.elo, $elo_start) as elo,
        played.matches,
        totals.attaque_counted,
        totals.classique_counted,
        totals.surcontrat_counted
    from totals
    inner join played
        on totals.month = played.month
        and totals.player_id = played.player_id
    left join month_end_elo
        on totals.month = month_end_elo.month
        and totals.player_id = month_end_elo.player_id
),

final as (
    select
        month,
        rank() over (partition by month order by points desc) as rank,
        player_id,
        points,
        elo,
        -- the Elo the site shows: rounded half away from zero (DuckDB's round of a double)
        cast(round(elo) as bigint) as elo_rounded,
        matches,
        attaque_counted,
        classique_counted,
        surcontrat_counted
    from with_elo
)

select * from final
order by month, rank, player_id
