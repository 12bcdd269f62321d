"""Verification of LEIR programs with Apache TVM.

Layout: ``tvm_adapter`` is the only module in steptp that imports ``tvm`` (it hides the TVM 0.27 API and
records the TVM/tvm-ffi versions); ``lowering`` turns a checked LEIR program into TVMScript/TIR (over
``storage``, ``loop_mapping``, ``gpu_legality`` and ``emit_tir``, one job each);
``targets`` names the build targets and the GPU limits; ``build`` compiles and runs kernels on numpy
arrays; ``tokens`` compares the size of LEIR, TIR and CUDA in Qwen tokens. The sandbox, inputs, compare,
timing, cache and verify modules build the verification protocol on top of ``build`` (``verify`` is the
caller's side of the sandbox, ``verify_job`` the job a sandbox worker runs).
"""
