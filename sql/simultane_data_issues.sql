-- simultane_data_issues: the data_issues rows of the Simultané deals (month, kind, keys,
-- detail), one check per CTE.
--
-- no_bot_reference (keys tournament_id, deal_no): the deal has no finished bot row, so it is not
-- scored for anyone (simultane.md, "Finished and unfinished deals"); the rest of the tournament
-- is scored as usual.
--
-- Input: simultane_deal (bronze deals, re-deliveries resolved, with `finished`: the
-- participant finished the deal within the time limit).

with

deals as (
    select
        tournament_id,
        deal_no,
        month,
        is_bot,
        finished
    from simultane_deal
),

per_deal as (
    select
        tournament_id,
        deal_no,
        any_value(month) as month,
        count(*) as participants,
        coalesce(bool_or(is_bot and finished), false) as has_bot,
        coalesce(bool_or(is_bot), false) as any_bot
    from deals
    group by tournament_id, deal_no
),

no_bot_reference as (
    select
        tournament_id,
        deal_no,
        month,
        'no_bot_reference' as kind,
        json_object(
            'tournament_id', tournament_id::varchar, 'deal_no', deal_no::varchar
        )::varchar as keys,
        format(
            'no finished bot row ({}): deal not scored for its {} participants',
            case when any_bot then 'bot unfinished' else 'no bot row' end,
            participants
        ) as detail
    from per_deal
    where not has_bot
),

final as (
    select
        tournament_id,
        deal_no,
        month,
        kind,
        keys,
        detail
    from no_bot_reference
)

select
    month,
    kind,
    keys,
    detail
from final
order by tournament_id, deal_no
