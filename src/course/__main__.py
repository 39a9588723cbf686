"""Allow `python -m course`."""
import sys

from course.cli import main

if __name__ == "__main__":  # `course grade` spawns worker processes, which import this module without running it
    sys.exit(main())
