"""socratic TUI: `socratic watch` (live, steerable) and `socratic replay` (clock and seek).

    state.py         CampaignState: a pure reducer over events; Timeline: checkpoints, seek
    app.py           SocraticApp (both modes), run_watch() (used by `socratic run`), run_replay()
    cli.py           argparse registration (cheap to import: Textual loads in the handlers)
    *_screen.py      modal screens (help, confirm, free text, question picker), .tcss beside
    widgets/         one widget per file: transcript and its blocks, scenario table, eval
                     header, speedup plot, status line, pending questions, key hints, picker
"""
