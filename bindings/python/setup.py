"""pip wheel --no-build-isolation --no-deps bindings/python   (or pip install ... the same way)

Builds deepinfer._native against a CMake build tree's libdeepinfer.so (DI_BUILD_DIR, default:
build/ at the repository root; build it first with cmake) and bundles the library (and the
CUDA backend, when the tree has one) inside the package, found through an $ORIGIN RUNPATH: the
wheel installs into any venv of the same Python, no system site-packages and no build tree.
Uses setuptools and pybind11 from the system (Debian: python3-setuptools, python3-pybind11).
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from pybind11.setup_helpers import ParallelCompile, Pybind11Extension, build_ext
from setuptools import setup

here = Path(__file__).resolve().parent
root = here.parent.parent
build_dir = Path(os.environ.get("DI_BUILD_DIR", root / "build")).resolve()
lib = build_dir / "lib"
if not (lib / "libdeepinfer.so").exists():
    raise SystemExit(f"libdeepinfer.so not found in {lib}: build the library first "
                     "(cmake --build build --target deepinfer) or set DI_BUILD_DIR")
# setuptools' build/ lives in the CMake tree, one per interpreter: a rebuild against another
# DI_BUILD_DIR or Python never reuses the objects or the link of an earlier one.
work = build_dir / "python-setuptools" / sys.implementation.cache_tag
work.mkdir(parents=True, exist_ok=True)

# The module's sources compile in parallel (NPY_NUM_BUILD_JOBS jobs, default: every CPU).
ParallelCompile("NPY_NUM_BUILD_JOBS").install()

BUNDLED = ["libdeepinfer.so.1", "libdeepinfer_cuda.so"]


class BuildExtBundling(build_ext):
    """build_ext, then a copy of libdeepinfer (debug info stripped) next to the module."""

    def run(self):
        super().run()
        dest = Path(self.build_lib) / "deepinfer"
        for name in BUNDLED:
            src = lib / name
            if not src.exists():
                continue  # a build without CUDA has no backend to bundle
            out = dest / name
            shutil.copy(src.resolve(), out)  # with its mode: a shared object stays executable
            if shutil.which("strip"):
                subprocess.run(["strip", "--strip-debug", str(out)], check=True)


native = Pybind11Extension(
    "deepinfer._native",
    sorted(str(p.relative_to(here)) for p in (here / "src").glob("*.cpp")),
    include_dirs=[str(root), str(root / "capi" / "include")],
    library_dirs=[str(lib)],
    # The bundled libdeepinfer.so.1 sits next to the module.
    runtime_library_dirs=["$ORIGIN"],
    extra_link_args=["-Wl,--enable-new-dtags"],
    libraries=["deepinfer"],
    cxx_std=20,
)

setup(
    name="deepinfer",
    version="1.0.0",
    description="Python binding of libdeepinfer (DeepSeek inference engine and API recipe)",
    packages=["deepinfer"],
    ext_modules=[native],
    cmdclass={"build_ext": BuildExtBundling},
    options={"build": {"build_base": str(work)},
             "egg_info": {"egg_base": str(work)}},
    python_requires=">=3.8",
    zip_safe=False,
)
