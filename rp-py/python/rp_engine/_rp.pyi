"""Stubs of the native module rp_engine._rp (rp-py/src/lib.rs)."""

__all__ = ["version", "__version__"]

__version__: str

def version() -> str:
    """The version of the rp engine, such as ``"0.1.0"``."""
