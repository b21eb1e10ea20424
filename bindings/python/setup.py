"""pip install --no-build-isolation bindings/python

Builds deepinfer._native against a build tree's libdeepinfer.so (DI_BUILD_DIR, default: build/
at the repository root; build it first with cmake) and links it with an rpath to that tree.
Uses setuptools and pybind11 from the system (Debian: python3-setuptools, python3-pybind11).
"""
import os
from pathlib import Path

from pybind11.setup_helpers import ParallelCompile, Pybind11Extension, build_ext
from setuptools import setup

here = Path(__file__).resolve().parent
root = here.parent.parent
lib = Path(os.environ.get("DI_BUILD_DIR", root / "build")).resolve() / "lib"
if not (lib / "libdeepinfer.so").exists():
    raise SystemExit(f"libdeepinfer.so not found in {lib}: build the library first "
                     "(cmake --build build --target deepinfer) or set DI_BUILD_DIR")

# The module's sources compile in parallel (NPY_NUM_BUILD_JOBS jobs, default: every CPU).
ParallelCompile("NPY_NUM_BUILD_JOBS").install()

native = Pybind11Extension(
    "deepinfer._native",
    sorted(str(p.relative_to(here)) for p in (here / "src").glob("*.cpp")),
    include_dirs=[str(root), str(root / "capi" / "include")],
    library_dirs=[str(lib)],
    runtime_library_dirs=[str(lib)],
    libraries=["deepinfer"],
    cxx_std=20,
)

setup(
    name="deepinfer",
    version="1.0.0",
    description="Python binding of libdeepinfer (DeepSeek inference engine and API recipe)",
    packages=["deepinfer"],
    ext_modules=[native],
    cmdclass={"build_ext": build_ext},
    python_requires=">=3.8",
)
