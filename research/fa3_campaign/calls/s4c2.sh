# call s4c2: v54 = v53 + V waited for after S is issued + no 192-key tiles at d128; variants over v54
# late rescale (v55), causal d128 on the cost model's tile (v56), 3 stages at d128 (v57), L2 hints (v58), ping-pong across long d128 tiles (v59)
source research/fa3_campaign/device_setup.sh || exit 1
B=research/fa3_campaign
for c in v54 v55 v56 v57 v58 v59; do (python3 -m socratic eval flash_attn_fwd --candidate $B/cands/$c.cu --check-only --json > /tmp/check.$c.json 2>&1 &); done
sleep 45
bash $B/run.sh v54:smoke v54:bench v53:bench v55:smoke v55:bench v56:smoke v56:bench v57:smoke v57:bench v58:smoke v58:bench v59:smoke v59:bench
