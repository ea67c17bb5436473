# Rebuild the campaign's kernels after the shipped one in cands/ (not tracked) from the patch
# chain: v101 = the shipped kernel (v100) + v101_empty_noq.patch, v102 = v101 + v102_pack_gqa.patch,
# ... v106 = v105 + v106_warp_fill.patch; cands/v100.cu is the shipped kernel itself. From
# anywhere:  bash research/fa3_campaign/cands.sh   (then `quick.py build NAME` for a .so);
# CANDS=DIR writes them there instead.
set -e
B=$(cd "$(dirname "$0")" && pwd)
C=${CANDS:-$B/cands}
mkdir -p "$C"
cp "$B/../../tests/candidates/fa3_h200_best.cu" "$C/v100.cu"
prev=v100
for p in v101_empty_noq v102_pack_gqa v103_zero_rows v104_bulk_zero v105_zr_variants v106_warp_fill; do
  n=${p%%_*}
  cp "$C/$prev.cu" "$C/$n.tmp"
  patch -s --no-backup-if-mismatch "$C/$n.tmp" "$B/$p.patch" || { echo "cands.sh: $p.patch does not apply to $prev"; rm -f "$C/$n.tmp"; exit 1; }
  mv "$C/$n.tmp" "$C/$n.cu"
  prev=$n
done
echo "cands.sh: $C/v100.cu (shipped) to $C/$prev.cu"
