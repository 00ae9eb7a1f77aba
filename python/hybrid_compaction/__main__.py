"""``python -m hybrid_compaction ...`` is the ``hybrid-compaction`` command."""

from ._cli import main

main()
