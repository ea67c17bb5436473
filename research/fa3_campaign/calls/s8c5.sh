# call s8c5 (session 8, issue 26), on the evaluator with the causal FLOP count fixed (q k / 2
# overstated the work at seqlen_q > seqlen_k, and the physical limit failed v88's smoke in
# s8c4 on a hidden q8148-k2632 causal scenario): v88's smoke again, v75 and v88 twice each,
# interleaved (v88's first bench was skipped in s8c4 after its smoke)
B=research/fa3_campaign
bash $B/run.sh v88:smoke v75:bench v88:bench v75r:bench v88r:bench v87:bench
