from slowave_graph.cli import main

raise SystemExit(main())
