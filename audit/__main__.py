"""`python -m audit ...` is `warden audit ...` (an auditor may install only this package)."""

from audit.cli import main

raise SystemExit(main())
