"""Test doubles, apart from the shipped campaign code: the fake Messages API (`fakeapi`),
the fake evaluator (`fakeeval`), the scripted agent of the demo recording (`demo`, its
kernels in `demo_kernels/`) and helpers for tests and benchmarks (`testing`). Nothing in
socratic.harness imports them."""
