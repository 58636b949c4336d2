"""``python -m harness`` == the ``verikit`` console script."""

import sys

from .cli import main

sys.exit(main())
