"""``python -m ppmlib.synthesize ...``: the same as ``ppm-synthesize ...``."""
import sys

from ppmlib.release.command import main

if __name__ == "__main__":
    sys.exit(main())
