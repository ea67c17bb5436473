"""socratic TUI: `socratic watch` (live, steerable) and `socratic replay` (clock and seek).

    state.py         CampaignState: a pure reducer over events; Timeline: checkpoints, seek
    app.py           SocraticApp (its default screen is the mode's), run_watch() (used by
                     `socratic run`), run_replay(); app.tcss: the campaign screens' styles
    campaign_screen.py  the screen both modes share: layout, drawing, keys of both modes
    watch_screen.py  WatchScreen: tails events.jsonl, writes inbox.jsonl
    replay_screen.py ReplayScreen: a Timeline played with a clock, seeking
    cli.py           argparse registration (cheap to import: Textual loads in the handlers)
    *_screen.py      the rest are modal screens (help, confirm, free text, question picker), .tcss beside
    widgets/         one widget per file: transcript and its blocks, scenario table, eval
                     header, speedup plot, status line, pending questions, key hints, picker
"""
