-- The bridge report of `duplirank nightly`: the winners of the $top latest events (by id).

with

winners as (
    select
        event_id,
        section,
        rank,
        pair,
        total,
        pct
    from bridge_standings
    where rank = 1
),

final as (
    select * from winners
)

select * from final
order by event_id desc, section
limit $top
