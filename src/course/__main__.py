"""Allow `python -m course`."""

import sys

from course.cli import main

if __name__ == "__main__":  # run as a program only, never when a process imports it
    sys.exit(main())
