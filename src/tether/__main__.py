"""`python -m tether` is the `tether` command."""

from tether.cli import main

main()
