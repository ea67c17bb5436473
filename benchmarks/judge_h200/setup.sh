# source on the H200 from the repository root: FlashAttention-3 (the fa3-fwd wheel carried
# in .whl/), this tree's socratic in /tmp/site and, for side-by-side runs, the evaluator as
# it was before the judge isolation (.whl_old/old.tgz: git archive of that commit) in
# /tmp/old_site. No network needed.
set +e
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/fa3 .whl/*.whl || return 1
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile --target /tmp/site . > /tmp/pip_new.log 2>&1 || { tail -5 /tmp/pip_new.log; return 1; }
if [ -f .whl_old/old.tgz ]; then
  rm -rf /tmp/oldsrc && mkdir -p /tmp/oldsrc && tar xzf .whl_old/old.tgz -C /tmp/oldsrc
  (cd /tmp/oldsrc && python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile --target /tmp/old_site . > /tmp/pip_old.log 2>&1) || { tail -5 /tmp/pip_old.log; return 1; }
fi
export NEW=/tmp/site:/tmp/fa3 OLD=/tmp/old_site:/tmp/fa3
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader || true
