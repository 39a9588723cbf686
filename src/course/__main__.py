"""Allow `python -m course`."""
import sys

from course.cli import main

sys.exit(main())
