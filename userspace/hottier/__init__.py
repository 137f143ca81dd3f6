"""hottierctl: the administrator's tool for dm-hottier devices."""

__version__ = "0.3.0"


class HottierError(Exception):
    """An error hottierctl reports as one line and exit status 1."""
