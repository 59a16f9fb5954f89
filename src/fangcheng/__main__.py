"""``python -m fangcheng``: the same commands as the ``fangcheng`` script."""

import sys

from fangcheng.cli import main

sys.exit(main())
