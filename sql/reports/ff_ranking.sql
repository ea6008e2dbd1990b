-- The Face-à-Face report of `duplirank nightly`: the $top first of the latest month's ranking.

with

latest_month as (
    select
        month,
        rank,
        player_id,
        points,
        elo,
        matches,
        attaque_counted,
        classique_counted
    from ff_monthly_ranking
    where month = (select max(month) from ff_monthly_ranking)
),

final as (
    select
        month,
        rank,
        player_id,
        round(points, 2) as points,
        round(elo) as elo,
        matches,
        attaque_counted,
        classique_counted
    from latest_month
)

select * from final
order by rank, player_id
limit $top
