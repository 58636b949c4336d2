"""``python -m harness.cli`` == ``python -m harness`` == the ``verikit`` console script."""

import sys

from . import main

sys.exit(main())
