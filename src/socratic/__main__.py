from socratic.cli import main

raise SystemExit(main())
