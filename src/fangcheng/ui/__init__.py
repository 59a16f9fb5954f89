"""User interfaces over the protocol."""
