"""rp_engine: an embeddable engine that runs LLM-driven characters.

The engine holds every bit of the simulated world's state; the LLM only
renders it. This package is the Python binding of the Rust crate rp-core.
"""

from rp_engine._rp import version

__version__: str = version()
"""The version of the rp engine, such as ``"0.1.0"``."""

__all__ = ["__version__", "version"]
