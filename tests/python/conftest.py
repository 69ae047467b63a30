# pytest under CTest (tests/CMakeLists.txt): run from the repository root with PYTHONPATH=build/python,
# so that shared data is ../shared/datasets/... as in the C++ tests.
import os

import pytest


@pytest.fixture(autouse=True)
def repository_root(monkeypatch):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    monkeypatch.chdir(root)
