"""Shared fixtures: the repository, the build tree, the transformers DeepSeek-V4 fixtures
(random weights with transformers' greedy ids) and the bundled tiny model (with a tokenizer).

DI_BUILD_DIR names the build tree (default: build/ at the repository root); DI_TINY_MODEL the
tiny model made by `deepinfer make-tiny-model` (default: models/tiny-v4, made on first use).
"""
import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BUILD = Path(os.environ.get("DI_BUILD_DIR", ROOT / "build"))
V4_FIXTURES = ROOT / "tests" / "fixtures" / "model_v4"
V4_NAMES = sorted(p.name for p in V4_FIXTURES.iterdir() if (p / "fixture.json").exists())


def load_v4(name):
    d = V4_FIXTURES / name
    f = json.loads((d / "fixture.json").read_text())
    return str(d), f["prompt_ids"], f["greedy_ids"]


@pytest.fixture(scope="session")
def tiny_model():
    path = Path(os.environ.get("DI_TINY_MODEL", ROOT / "models" / "tiny-v4"))
    if not (path / "model.safetensors").exists():
        subprocess.run([str(BUILD / "bin" / "deepinfer"), "make-tiny-model", "--out", str(path),
                        "--seed", "0"], check=True, stdout=subprocess.DEVNULL)
    return str(path)


# Loading the tiny model (a 129k-token vocabulary) is the slow part: one engine, its tokenizer
# and one recipe serve every test that does not close them.
@pytest.fixture(scope="session")
def tiny_engine(tiny_model):
    import deepinfer
    with deepinfer.Engine(tiny_model, max_num_seqs=8) as engine:
        yield engine


@pytest.fixture(scope="session")
def tiny_tokenizer(tiny_engine):
    return tiny_engine.tokenizer


@pytest.fixture(scope="session")
def tiny_recipe(tiny_model):
    import deepinfer
    with deepinfer.Recipe(tiny_model) as recipe:
        yield recipe
