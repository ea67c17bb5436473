# call s4c1: the key loop split in two so that the softmax overlaps P V (HOP_SPLIT_MASK: in
# v48's SASS every kernel waited for P V before its row max), with the variants it opens
source research/fa3_campaign/device_setup.sh || exit 1
B=research/fa3_campaign
for c in v49 v50 v51 v52 v53; do (python3 -m socratic eval flash_attn_fwd --candidate $B/cands/$c.cu --check-only --json > /tmp/check.$c.json 2>&1 &); done
sleep 45
bash $B/run.sh v49:smoke v49:bench v48:bench v53:smoke v53:bench v50:smoke v50:bench v51:smoke v51:bench v52:smoke v52:bench
