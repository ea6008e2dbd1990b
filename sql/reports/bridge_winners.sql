-- The bridge report of `duplirank nightly`: the winners of the $top latest events (by id), one
-- per field (a two-winner movement has an NS and an EW winner).

with

winners as (
    select
        event_id,
        section,
        field,
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
order by event_id desc, section, field
limit $top
