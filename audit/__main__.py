"""`python -m audit ...` is `warden audit ...` (an auditor may install only this package)."""

from audit.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
