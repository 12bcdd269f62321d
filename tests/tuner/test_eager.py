"""The eager probe runs the problem file's model in a sandbox worker and reports ms per call."""

from __future__ import annotations

import math
import os

import pytest

from tuner.eager import eager_ms, eager_ms_job
from verifier.sandbox import WorkerPool

MODULE = '''
import torch

N = 8


class Model(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] > 64:
            raise ValueError("this model refuses more than 64 rows")
        return torch.relu(x) * 2


def get_inputs():
    return [torch.rand(N, 16)]


def get_init_inputs():
    return []
'''


def pid_job() -> int:
    return os.getpid()


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(1, timeout=120) as workers:
        yield workers


def test_probe_times_the_model_in_a_worker(tmp_path, pool):
    path = tmp_path / "relu_model.py"
    path.write_text(MODULE)
    ms = eager_ms(path, {"N": 8}, pool=pool)
    assert math.isfinite(ms) and ms > 0
    assert pool.run(pid_job).value != os.getpid()  # the pool it used is another process
    assert eager_ms_job(str(path), {"N": 8}) > 0  # the job itself, here, gives a time too


def test_a_size_the_model_refuses_is_an_error_with_the_reason(tmp_path, pool):
    path = tmp_path / "relu_model.py"
    path.write_text(MODULE)
    with pytest.raises(RuntimeError, match="refuses more than 64 rows"):
        eager_ms(path, {"N": 128}, pool=pool)
