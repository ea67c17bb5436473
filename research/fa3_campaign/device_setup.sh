# source on the GPU node before run.sh: the fa3-fwd wheel and a socratic wheel (both carried
# in .whl/: python3 -m pip wheel --no-deps . -w .whl, here, before each call)
# installed into /tmp/site, no network needed; prints the GPU and the versions it times with
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || return 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
python3 -c "import torch, socratic; print('torch', torch.__version__, 'socratic', socratic.__file__)"
