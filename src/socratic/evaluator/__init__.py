"""socratic evaluator: build a candidate, check it for banned libraries, check it on every
scenario against the original kernel and an fp32 reference, and time it against the
original on the same GPU. Entry points: `socratic eval` and `python -m socratic.evaluator`."""
