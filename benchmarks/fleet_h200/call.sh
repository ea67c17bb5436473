# on a GPU node, from the repository root, with .whl (the socratic and fa3-fwd wheels) and
# .whl_fleet (anthropic and its requirements) carried: benchmarks/fleet_gpus_check.py on the
# shipped attention kernel, every GPU the node has; results as $OUT/fleet_gpus.tgz
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl .whl_fleet/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=index,name,uuid --format=csv,noheader
set -o pipefail
python3 benchmarks/fleet_gpus_check.py --candidate tests/candidates/fa3_h200_best.cu --out /tmp/fleet_gpus "$@" 2>&1 | tee /tmp/fleet_gpus.log
rc=$?
cp /tmp/fleet_gpus.log /tmp/fleet_gpus/ 2>/dev/null
tar czf $OUT/fleet_gpus.tgz -C /tmp fleet_gpus
exit $rc
