"""The package's PEP 517 build backend: maturin's, once cargo is known to be there.

Building ``hybrid-compaction`` from source compiles Rust. Without ``cargo`` on ``PATH``,
maturin's own backend asks pip for ``puccinialin``, which downloads a Rust toolchain from
outside the package registries (hundreds of megabytes) before anything is built. This wrapper
refuses at once instead, saying what to install; every hook then is maturin's, unchanged.
Installing the prebuilt wheel needs no backend at all.
"""

import os
import shutil

MESSAGE = (
    "hybrid-compaction: building from source needs a Rust toolchain, and `cargo` is not on PATH.\n"
    "  Either install the prebuilt wheel (pip install hybrid_compaction-<version>-cp39-abi3-<platform>.whl,\n"
    "  as CI builds it; or `pip install hybrid-compaction` once it is on the package index),\n"
    "  or install Rust (stable, with cargo: your distribution's `cargo` package or rustup) and retry.\n"
    "  No toolchain is downloaded for you."
)


def _cargo() -> None:
    if shutil.which("cargo") is None and not os.environ.get("CARGO"):
        raise RuntimeError(MESSAGE)


def _maturin():  # type: ignore[no-untyped-def]
    _cargo()
    import maturin

    return maturin


def get_requires_for_build_wheel(config_settings=None):  # type: ignore[no-untyped-def]
    return _maturin().get_requires_for_build_wheel(config_settings)


def get_requires_for_build_sdist(config_settings=None):  # type: ignore[no-untyped-def]
    return _maturin().get_requires_for_build_sdist(config_settings)


def get_requires_for_build_editable(config_settings=None):  # type: ignore[no-untyped-def]
    return _maturin().get_requires_for_build_editable(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):  # type: ignore[no-untyped-def]
    return _maturin().prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):  # type: ignore[no-untyped-def]
    return _maturin().prepare_metadata_for_build_editable(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):  # type: ignore[no-untyped-def]
    return _maturin().build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):  # type: ignore[no-untyped-def]
    return _maturin().build_editable(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory, config_settings=None):  # type: ignore[no-untyped-def]
    return _maturin().build_sdist(sdist_directory, config_settings)
