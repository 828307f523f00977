"""What the transforms share: the protocol of transformed functions (``protocol.py``)."""
