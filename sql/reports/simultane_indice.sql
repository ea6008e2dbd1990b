-- The Simultané report of `duplirank nightly`: the $top best Indices of the latest month.

with

latest_month as (
    select
        month,
        rank_indice,
        player_id,
        indice,
        victoire,
        tournaments,
        wins,
        pct_actuel,
        representative
    from simultane_monthly
    where month = (select max(month) from simultane_monthly)
),

final as (
    select
        month,
        rank_indice as rank,
        player_id,
        round(indice, 2) as indice,
        round(victoire, 2) as victoire,
        tournaments,
        wins,
        round(pct_actuel, 1) as pct_actuel,
        representative
    from latest_month
)

select * from final
order by rank, player_id
limit $top
