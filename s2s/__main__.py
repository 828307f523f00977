"""``python -m s2s ...``: the command line (see ``s2s.cli``)."""
import sys

from .cli.main import main

sys.exit(main())
