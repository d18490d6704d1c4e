import sys

from flows.cli import main

sys.exit(main())
