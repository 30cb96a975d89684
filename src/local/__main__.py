import sys

from local.cli import main

sys.exit(main())
