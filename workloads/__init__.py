"""Built-in source programs of Step-TP, one PyTorch file each, in the KernelBench convention.

``level1/`` holds single-operator programs, ``level2/`` fused programs (attention, GEMM/convolution with
epilogues, normalisation chains, a selective scan).  Every file defines ``class Model(nn.Module)``,
``get_inputs()``, ``get_init_inputs()``, UPPER_CASE shape constants (small defaults, so the naive loop-nest
verifier runs them in seconds) and a literal ``STEPTP`` metadata dict.  :mod:`workloads.registry` reads that
metadata with :mod:`ast`, so listing the suite never imports torch.  See ``docs/workloads.md``.
"""
