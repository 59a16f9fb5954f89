"""``python -m fangcheng``: the same commands as the ``fangcheng`` script."""

import sys

from .cli import main

sys.exit(main())
