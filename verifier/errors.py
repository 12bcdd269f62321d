"""The verifier's typed errors: one base, and a class per layer that can fail.

Callers that must tell failures apart — a Celery task deciding whether a retry could help, the curation
app showing why a step failed — read the class, which every ``VerificationResult`` keeps by name in
``error_class``. Program failures (``LoweringError`` and ``BuildError``, a kernel that crashed) will fail
the same way again; only ``SandboxError`` — the sandbox machinery itself could not run the job — is worth
a retry.
"""

from __future__ import annotations


class VerifierError(Exception):
    """Base of every error the verifier reports."""

    #: Whether running the same verification again could succeed.
    retryable = False


class LoweringError(VerifierError):
    """The program is valid LEIR but cannot be lowered to the requested target."""


class BuildError(LoweringError):
    """TVM could not compile the lowered module for the target; carries TVM's message."""


class GpuLimitError(LoweringError):
    """A binding or allocation exceeds a CUDA limit; names the loop (or tensor) and the limit."""

    def __init__(self, message: str, *, loop: str = "", limit: str = "") -> None:
        self.loop = loop
        self.limit = limit
        super().__init__(message)


class KernelFailure(VerifierError):
    """The built kernel crashed, hung or ran out of memory in the sandbox (the program's fault)."""


class SandboxError(VerifierError):
    """The sandbox could not run the job at all (a worker would not start): infrastructure, retryable."""

    retryable = True
