"""Imports the native module, and says plainly when it was built for another interpreter.

An extension module is only found under the file name suffix of the interpreter it was built
for (``_native.cpython-311-x86_64-linux-gnu.so``); any other interpreter only sees "cannot
import name '_native'", which reads like a circular import. This names both interpreters.
"""
from __future__ import annotations

import importlib
import importlib.machinery
import sys
from pathlib import Path


def load_native():
    try:
        return importlib.import_module(__package__ + "._native")
    except ImportError as e:
        here = Path(__file__).resolve().parent
        found = sorted(p.name for p in here.glob("_native*.so"))
        suffixes = importlib.machinery.EXTENSION_SUFFIXES
        usable = [n for n in found if any(n == "_native" + s for s in suffixes)]
        if found and not usable:
            built_for = found[0][len("_native"):].lstrip(".").rsplit(".so", 1)[0] or "an unknown Python"
            raise ImportError(
                f"deepinfer's native module {here / found[0]} was built for {built_for}, but this is "
                f"Python {sys.version.split()[0]} ({sys.executable}, which loads *{suffixes[0]}): "
                f"install the deepinfer wheel built for this interpreter (pip wheel bindings/python "
                f"with it)") from e
        if not found:
            raise ImportError(f"deepinfer's native module (_native*.so) is missing from {here}: "
                              f"build it (cmake --build build --target deepinfer_python) or install "
                              f"the wheel") from e
        raise
