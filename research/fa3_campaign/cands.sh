# Rebuild the campaign's kernels v100-v107 in cands/ (not tracked) from the shipped kernel and the
# patch chain: v101 = v100 + v101_empty_noq.patch, v102 = v101 + v102_pack_gqa.patch, ...
# v106 = v105 + v106_warp_fill.patch. The shipped kernel (tests/candidates/fa3_h200_best.cu) is
# v106 since session 24 (v100 before it): cands/v106.cu is that file, and each earlier kernel is
# the next one with its patch reversed (v100: the kernel shipped in sessions 20-24, byte for
# byte). From anywhere:  bash research/fa3_campaign/cands.sh   (then `quick.py build NAME` for a
# .so); CANDS=DIR writes them there instead.
set -e
B=$(cd "$(dirname "$0")" && pwd)
C=${CANDS:-$B/cands}
SHIPPED=v106
mkdir -p "$C"
cp "$B/../../tests/candidates/fa3_h200_best.cu" "$C/$SHIPPED.cu"
for p in v106_warp_fill v105_zr_variants v104_bulk_zero v103_zero_rows v102_pack_gqa v101_empty_noq; do
  n=${p%%_*}; before=v$(( ${n#v} - 1 ))
  cp "$C/$n.cu" "$C/$before.tmp"
  patch -R -s --no-backup-if-mismatch "$C/$before.tmp" "$B/$p.patch" \
    || { echo "cands.sh: $p.patch does not reverse from $n"; rm -f "$C/$before.tmp" "$C/$before.tmp.rej"; exit 1; }
  mv "$C/$before.tmp" "$C/$before.cu"
done
# and forward: the kernels made after the shipped one, each the one before with its patch
for p in v107_zero_memset; do
  n=${p%%_*}; before=v$(( ${n#v} - 1 ))
  cp "$C/$before.cu" "$C/$n.tmp"
  patch -s --no-backup-if-mismatch "$C/$n.tmp" "$B/$p.patch" \
    || { echo "cands.sh: $p.patch does not apply to $before"; rm -f "$C/$n.tmp" "$C/$n.tmp.rej"; exit 1; }
  mv "$C/$n.tmp" "$C/$n.cu"
done
echo "cands.sh: $C/$SHIPPED.cu (shipped) back to $C/v100.cu, forward to $C/v107.cu"
