# source on the GPU machine from the repository root: a virtual environment over the
# machine's Python (torch, cuda-python, numpy come from its site-packages) holding this
# tree's socratic, FlashAttention-3 (the fa3-fwd wheel carried in .whl/) and, where carried,
# the test wheels of .whl_test/. socratic's own children run `python -I` (core/pyproc.py):
# they see site-packages, never PYTHONPATH, so everything they import is installed here.
# Optional: OLD=<commit archive .whl_old/old.tgz> installs the evaluator as it was into
# /tmp/venv_old, for side-by-side runs. No network needed.
set +e
export PYTHONUNBUFFERED=1
python3 -m venv --system-site-packages /tmp/venv || return 1
# python3 there is itself a venv (/opt/torch/.venv): --system-site-packages reaches the base
# interpreter's, not its packages (torch, cuda-bindings, pytest): a .pth adds them
parent_site() { python3 -c "import site; print(site.getsitepackages()[0])"; }
echo "$(parent_site)" > "$(/tmp/venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/zz_parent.pth"
/tmp/venv/bin/python -m pip install -q --no-index --no-deps --no-compile --no-cache-dir .whl/*.whl || return 1
/tmp/venv/bin/python -m pip install -q --no-index --no-deps --no-build-isolation --no-compile . > /tmp/pip_new.log 2>&1 \
  || { tail -5 /tmp/pip_new.log; return 1; }
test_extras() {   # the test wheels (pytest, textual, anthropic, ...) and the test doubles, which the wheel leaves out
  [ -d .whl_test ] || return 0
  /tmp/venv/bin/python -m pip install -q --no-index --no-deps --no-compile .whl_test/*.whl
  ln -sfn "$PWD/src/socratic_doubles" "$(/tmp/venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/socratic_doubles"
}
test_extras
if [ -f .whl_old/old.tgz ]; then
  python3 -m venv --system-site-packages /tmp/venv_old
  echo "$(parent_site)" > "$(/tmp/venv_old/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/zz_parent.pth"
  /tmp/venv_old/bin/python -m pip install -q --no-index --no-deps --no-compile --no-cache-dir .whl/*.whl
  rm -rf /tmp/oldsrc && mkdir -p /tmp/oldsrc && tar xzf .whl_old/old.tgz -C /tmp/oldsrc
  (cd /tmp/oldsrc && /tmp/venv_old/bin/python -m pip install -q --no-index --no-deps --no-build-isolation --no-compile . \
     > /tmp/pip_old.log 2>&1) || { tail -5 /tmp/pip_old.log; return 1; }
fi
export PATH=/tmp/venv/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader || true
