from secure_shell.cli import main

raise SystemExit(main())
