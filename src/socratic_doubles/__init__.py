"""Test doubles, apart from the shipped campaign code: the fake model APIs (`fakeapi` for
Messages, `fakeopenai` for Responses, `fakegemini` for Gemini, on the server in `httpfake`),
the fake evaluator (`fakeeval`), the scripted agent of the demo recording (`demo`, its
kernels in `demo_kernels/`) and helpers for tests and benchmarks (`testing`). Nothing in
socratic.harness imports them."""
