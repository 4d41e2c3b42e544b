"""The version of the engine as Python sees it."""

import importlib.metadata
import re
import sys
from pathlib import Path

import rp_engine
from rp_engine import _rp

# A Cargo (semver) version with only the core part: major.minor.patch.
SEMVER_CORE = re.compile(r"\d+\.\d+\.\d+")


def test_version_is_a_non_empty_semver_string() -> None:
    version = rp_engine.version()
    assert isinstance(version, str)
    assert SEMVER_CORE.match(version), version


def test_dunder_version_is_the_engine_version() -> None:
    assert rp_engine.__version__ == rp_engine.version()
    assert _rp.__version__ == rp_engine.version()


def test_version_matches_the_installed_distribution() -> None:
    # maturin takes the distribution's version from the crate, so a wheel
    # never claims a version other than the engine inside it.
    assert importlib.metadata.version("rp-engine") == rp_engine.version()


# What the package adds in Python to the native module's names.
WRITTEN_IN_PYTHON = {"Token", "TurnStream", "Graph", "GraphNode"}


def test_the_package_reexports_the_native_module() -> None:
    assert rp_engine.version is _rp.version
    assert rp_engine.World is _rp.World
    assert sorted(rp_engine.__all__) == sorted(set(_rp.__all__) | WRITTEN_IN_PYTHON)
    for name in _rp.__all__:
        assert getattr(rp_engine, name) == getattr(_rp, name), name
    for name in WRITTEN_IN_PYTHON:
        assert getattr(rp_engine, name).__module__.startswith("rp_engine."), name


def test_native_module_is_built_for_the_stable_abi() -> None:
    # One wheel serves every CPython from 3.9 on (pyo3's abi3-py39).
    name = Path(_rp.__file__).name
    if sys.platform == "win32":
        assert name.endswith(".pyd"), name
    else:
        assert name.endswith(".abi3.so"), name


def test_the_package_ships_its_typing_information() -> None:
    package = Path(rp_engine.__file__).parent
    assert (package / "py.typed").is_file()
    assert (package / "_rp.pyi").is_file()
