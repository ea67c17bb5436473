import sys

from evaluator.cli import standalone_main

sys.exit(standalone_main())
