"""normal_matmul_to_prefix_matmul_based_on_online_softmax (catalogue #44): the P·V matmul joins the stream."""

from __future__ import annotations

from leir.strategies.base import Exactness, Level
from leir.strategies.math.flashattention_wo_tiling import FlashattentionWoTiling
from leir.strategies.registry import register


@register
class NormalMatmulToPrefixMatmulBasedOnOnlineSoftmax(FlashattentionWoTiling):
    """Turn the matmul of an online softmax's output into a prefix recurrence rescaled by its running statistics.

    Before: ``B^{2}_{tx=0}L^{4}_{a=0}[D^{f32,g}_{tx,a}=max(if_then_else(a-1<0,-inf,D^{f32,g}_{tx,a-1}),A^{f32,g}_{tx,a});E^{f32,g}_{tx,a}=if_then_else(D^{f32,g}_{tx,a}==-inf,0,if_then_else(a-1<0,0,E^{f32,g}_{tx,a-1}*exp(D^{f32,g}_{tx,a-1}-D^{f32,g}_{tx,a}))+exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx,a}));];B^{2}_{tx=0}L^{4}_{a=0}[F^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx,3})/E^{f32,g}_{tx,3};];B^{2}_{tx=0}L^{3}_{a=0}L^{4}_{c=0}[C^{f32,g}_{tx,a}=C^{f32,g}_{tx,a}+F^{f32,g}_{tx,c}*G^{f32,g}_{c,a};];``
    After:  ``B^{2}_{tx=0}L^{4}_{a=0}[D^{f32,g}_{tx,a}=max(if_then_else(a-1<0,-inf,D^{f32,g}_{tx,a-1}),A^{f32,g}_{tx,a});E^{f32,g}_{tx,a}=if_then_else(D^{f32,g}_{tx,a}==-inf,0,if_then_else(a-1<0,0,E^{f32,g}_{tx,a-1}*exp(D^{f32,g}_{tx,a-1}-D^{f32,g}_{tx,a}))+exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx,a}));H^{f32,g}_{tx,a}=if_then_else(D^{f32,g}_{tx,a}==-inf,0,if_then_else(a-1<0,0,E^{f32,g}_{tx,a-1}*exp(D^{f32,g}_{tx,a-1}-D^{f32,g}_{tx,a})/E^{f32,g}_{tx,a}));I^{f32,g}_{tx,a}=if_then_else(D^{f32,g}_{tx,a}==-inf,0,exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx,a})/E^{f32,g}_{tx,a});L^{3}_{d=0}[J^{f32,g}_{tx,d,a}=if_then_else(a-1<0,0,J^{f32,g}_{tx,d,a-1}*H^{f32,g}_{tx,a})+I^{f32,g}_{tx,a}*G^{f32,g}_{a,d};];];B^{2}_{tx=0}L^{3}_{a=0}[C^{f32,g}_{tx,a}=J^{f32,g}_{tx,a,3};];``

    Precondition: an online softmax — a block whose first two statements are #41's running max ``M_k``
    and running sum ``S_k`` — then the block computing ``P=exp(X-M_{K-1})/S_{K-1}``, then the single
    reduction ``O=O+P*V`` over exactly the streamed axis (``P`` read by bare loop variables, at least
    one output column loop, ``V`` written by none of these blocks, ``O`` by no other). The matmul
    becomes the normalised running output ``R_k = R_{k-1}*A_k + W_k*V_k`` with the rescale factor
    ``A_k = S_{k-1}*exp(M_{k-1}-M_k)/S_k`` and weight ``W_k = exp(X-M_k)/S_k`` computed once per
    element in the statistics' block (``R`` a nested block over the output columns), and
    ``O = R_{K-1}``: the prefix value at ``k`` is exactly the attention output over the first ``k+1`` keys, so no final division remains.
    ``S_k >= 1`` wherever ``M_k`` is finite (the maximal element contributes exp(0)); ``M_k=-inf`` is
    guarded. Designed here (listed by the paper, never implemented publicly).
    Numerically equivalent (N): see ``docs/math_streaming.md``.
    """  # noqa: E501

    number = 44
    name = "normal_matmul_to_prefix_matmul_based_on_online_softmax"
    level = Level.MATH
    exactness = Exactness.N
    forms = (True,)
    normalised = True
