#!/bin/bash
# Device probe: CUDA context isolation (research/ctx_probe/probe.cu). Prints what each call returned.
set -e
cd "$(dirname "$0")"
nvcc -arch=sm_90a -cubin -o probe_kernels.cubin probe.cu
nvcc -arch=sm_90a -o probe probe.cu -lcuda
./probe
