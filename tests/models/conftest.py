"""One built model per test session, from the cache (`warden models build`; built here when missing)."""

from __future__ import annotations

import os

# Small numpy problems (head training) are slower with OpenBLAS threads competing with xdist workers;
# effective only when numpy is first imported after this line.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import pytest

from models import build, categories, runtime, semantic
from models.train import Heads


@pytest.fixture(scope="session")
def built() -> build.Built:
    return build.ensure(progress=build.stderr_progress)


@pytest.fixture(scope="session")
def rt(built: build.Built) -> runtime.Runtime:
    return runtime.Runtime(built, threads=1)


@pytest.fixture(scope="session")
def detector(rt: runtime.Runtime) -> semantic.SemanticDetector:
    return semantic.SemanticDetector(rt, Heads.load(semantic.heads_path()), categories.load_categories())
