"""The ``hybrid-compaction`` console script: the oracle's command line, run in-process."""

import sys

from . import _native


def main() -> None:
    """Runs ``hybrid-compaction`` on ``sys.argv`` and exits with its exit code (0, 1 or 2)."""
    sys.stdout.flush()
    sys.exit(_native.main(["hybrid-compaction", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
