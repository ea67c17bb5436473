import sys

from socratic.evaluator.cli import standalone_main

sys.exit(standalone_main())
