"""Bridge pairs tournaments scored like KOPS (spec: bridge.md). One module per rule:

- `options.py`      every option and Decision (`BridgeOptions`), and their precedence
                    (`resolve_options`: defaults < event options < the caller's overrides)
- `boards.py`       vulnerability from the board number (or as given)
- `contracts.py`    the duplicate score of a contract (Laws 77/2); how a contract is written
                    (passed-out spellings, the contract pattern)
- `adjusted.py`     artificial scores (A60/A40, A50, ...)
- `travellers.py`   traveller lines ready for scoring (one sort gives every rank), data issues
- `frames.py`       integer keys (packed into one Int64, or a struct), rank positions, hundredths
- `matchpoints.py`  matchpoints from zero, Neuberg (exact hundredths), M < 4, traditional
- `three_tables.py` Marek Peszke's 3-table table (boards it cannot score are reported)
- `imps.py`         the IMP scale (and its Cavendish cap)
- `butler.py`       Butler datum: trimming (kops / out=n / fraction / median) and rounding
- `sunday_times.py` Sunday Times: a datum per score from the other scores
- `cavendish.py`    cross-IMPs and averaged cross-IMPs
- `vp.py`           WBF 2013 continuous VP scale
- `rounds.py`       rounds (given, boards per round, or consecutive boards vs one opponent)
- `penalties.py`    penalties and compensations
- `fields.py`       fields: one (Howell) or NS and EW (Mitchell), from the event or inferred
- `standings.py`    pair totals (round caps, VP), maxima, percentages, ranks within a field
- `reported.py`     the players' names and the scoring program's own figures of a file
- `pbn.py`          PBN 2.1 files -> bronze-shaped frames
- `usebio.py`       USEBIO 1.2 XML files -> bronze-shaped frames
- `deals.py`        each board's deal, dealer and vulnerability, as the files give them
- `event.py`        the entry point: `score_events(inputs, overrides)` -> `BridgeScores`
"""
