#!/bin/bash
# Device probe: CUDA context isolation (research/ctx_probe/probe.cu). Prints what each call returned.
set -e
cd "$(dirname "$0")"
nvcc -arch=sm_90a -cubin -o probe_kernels.cubin probe.cu
nvcc -arch=sm_90a -o probe probe.cu -lcuda 2>&1 | grep -v "warning\|Remark\|^\s*^\|^\s*$\|args\|Bc;" || true
rc=0; timeout ${PROBE_S:-60} ./probe || rc=$?; echo "probe exit $rc"
