"""Every function libdeepinfer exports is reached by the binding: the native module's undefined
dynamic symbols from libdeepinfer equal abi/exports.txt."""
import subprocess

import deepinfer
from deepinfer import _native

from conftest import ROOT


def test_native_module_imports_every_exported_function():
    exports = {l.strip() for l in (ROOT / "abi" / "exports.txt").read_text().splitlines()
               if l.strip()}
    out = subprocess.run(["nm", "-D", "--undefined-only", _native.__file__], check=True,
                         capture_output=True, text=True).stdout
    used = {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}
    used = {s for s in used if s.startswith("di_")}
    assert sorted(exports - used) == [], "exported but not wrapped by the Python binding"
    assert sorted(used - exports) == [], "used by the binding but not exported"


def test_versions_and_schema():
    assert deepinfer.__version__.startswith("1.")
    assert _native.abi_version() // 10000 == _native.ABI_VERSION // 10000
    assert "version" in deepinfer.build_info()
    keys = {k["key"]: k for k in deepinfer.options_schema()}
    assert keys["temperature"]["scope"] == "sampling"
    assert deepinfer.status_name(-4) == "DI_E_NOT_FOUND"
    assert deepinfer.status_name(12345) == "DI_UNKNOWN_STATUS"
