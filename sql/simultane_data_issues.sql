-- simultane_data_issues: the data_issues rows of the Simultané deals (month, kind, keys,
-- detail), one check per CTE.
--
-- no_bot_reference (keys tournament_id, deal_no): the deal has no finished bot row, so it is not
-- scored for anyone (simultane.md, "Finished and unfinished deals"); the rest of the tournament
-- is scored as usual.
-- several_bot_rows (keys tournament_id, deal_no): the deal has more than one bot row (one bot
-- plays each deal); it is scored against the finished one of the lowest player_id, the others
-- scored like any participant (transforms/simultane/scoring.py, `_bot_reference`).
-- deals_in_tournament_varies (keys tournament_id): the rows of a tournament do not agree on its
-- number of deals; the largest is used (a player completed the tournament by playing that many).
--
-- Input: simultane_deal (bronze deals, re-deliveries resolved, with `finished`: the
-- participant finished the deal within the time limit).

with

deals as (
    select
        tournament_id,
        deal_no,
        month,
        player_id,
        deals_in_tournament,
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
        coalesce(bool_or(is_bot), false) as any_bot,
        count(*) filter (where is_bot) as bot_rows,
        string_agg(player_id, ', ' order by player_id) filter (where is_bot) as bots
    from deals
    group by tournament_id, deal_no
),

per_tournament as (
    select
        tournament_id,
        any_value(month) as month,
        string_agg(distinct deals_in_tournament::varchar, ', '
                   order by deals_in_tournament::varchar) as given,
        max(deals_in_tournament) as used,
        count(distinct deals_in_tournament) as values_given
    from deals
    group by tournament_id
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

several_bot_rows as (
    select
        tournament_id,
        deal_no,
        month,
        'several_bot_rows' as kind,
        json_object(
            'tournament_id', tournament_id::varchar, 'deal_no', deal_no::varchar
        )::varchar as keys,
        format(
            '{} bot rows ({}): scored against the finished one of the lowest player_id',
            bot_rows,
            bots
        ) as detail
    from per_deal
    where bot_rows > 1
),

deals_in_tournament_varies as (
    select
        tournament_id,
        null::bigint as deal_no,
        month,
        'deals_in_tournament_varies' as kind,
        json_object('tournament_id', tournament_id::varchar)::varchar as keys,
        format('deals_in_tournament given as {}: {} is used', given, used) as detail
    from per_tournament
    where values_given > 1
),

final as (
    select tournament_id, deal_no, month, kind, keys, detail from no_bot_reference
    union all
    select tournament_id, deal_no, month, kind, keys, detail from several_bot_rows
    union all
    select tournament_id, deal_no, month, kind, keys, detail from deals_in_tournament_varies
)

select
    month,
    kind,
    keys,
    detail
from final
order by tournament_id, deal_no nulls first, kind
