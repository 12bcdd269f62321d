"""Recurrent cells and layers: ``nn.LSTMCell``, ``nn.GRUCell``, and ``nn.LSTM``/``nn.GRU`` unrolled over time.

A step is a gate contraction (``x W_ih^T``, accumulated with ``h W_hh^T`` and the biases, PyTorch's gate
order ``i f g o`` / ``r z n``) and a few elementwise blocks; layers unroll their steps (the program grows
linearly with the sequence length), multi-layer and bidirectional stacks included.
"""

from __future__ import annotations

from torch import nn

from leir.ast import Assign

from .. import expr as E
from ..emit import Tensor
from ..errors import UnsupportedOperatorError
from ..registry import leir_dtype, op
from .linalg import contract


def _gate_sum(ctx, dtype, n, rows, x_read, in_size, w_ih, h: Tensor | None, w_hh, biases) -> Tensor:
    """``G[n, g] = sum_k x[n, k] W_ih[g, k] (+ sum_k h[n, k] W_hh[g, k]) + biases[g]``."""
    gates = contract(ctx, (n, rows), [in_size],
                     lambda vs, rs: E.mul(x_read(vs[0], rs[0]), w_ih.ref(vs[1], rs[0])), dtype)
    if h is not None:
        def body(b, g, k):
            lhs = gates.ref(b, g)
            return Assign(lhs, E.add(lhs, E.mul(h.ref(b, k), w_hh.ref(g, k))))

        ctx.em.block((n, rows, h.shape[1]), body)
    for bias in biases:
        if bias is not None:
            ctx.em.block((n, rows), lambda b, g, bias=bias: Assign(gates.ref(b, g),
                                                                   E.add(gates.ref(b, g), bias.ref(g))))
    return gates


def lstm_step(ctx, dtype, x_read, in_size, n, hidden, w_ih, w_hh, b_ih, b_hh, h, c):
    gates = _gate_sum(ctx, dtype, n, 4 * hidden, x_read, in_size, w_ih, h, w_hh, (b_ih, b_hh))

    def gate(b, j, k):
        return gates.ref(b, E.iadd(j, k * hidden))

    new_c = ctx.em.fresh((n, hidden), dtype)

    def cell(b, j):
        keep = E.mul(E.sigmoid(gate(b, j, 1)), c.ref(b, j)) if c is not None else None
        write = E.mul(E.sigmoid(gate(b, j, 0)), E.tanh(gate(b, j, 2)))
        return Assign(new_c.ref(b, j), write if keep is None else E.add(keep, write))

    ctx.em.block((n, hidden), cell)
    new_h = ctx.em.fresh((n, hidden), dtype)
    ctx.em.block((n, hidden), lambda b, j: Assign(new_h.ref(b, j),
                                                  E.mul(E.sigmoid(gate(b, j, 3)), E.tanh(new_c.ref(b, j)))))
    return new_h, new_c


def gru_step(ctx, dtype, x_read, in_size, n, hidden, w_ih, w_hh, b_ih, b_hh, h):
    gi = _gate_sum(ctx, dtype, n, 3 * hidden, x_read, in_size, w_ih, None, None, (b_ih,))
    if h is not None:
        gh = _gate_sum(ctx, dtype, n, 3 * hidden, lambda b, k: h.ref(b, k), hidden, w_hh, None, None, (b_hh,))

        def hidden_gate(b, j, k):
            return gh.ref(b, E.iadd(j, k * hidden))
    else:  # h = 0: the hidden contribution is the bias alone
        def hidden_gate(b, j, k):
            return b_hh.ref(E.iadd(j, k * hidden)) if b_hh is not None else E.ZERO

    def in_gate(b, j, k):
        return gi.ref(b, E.iadd(j, k * hidden))

    new_h = ctx.em.fresh((n, hidden), dtype)

    def body(b, j):
        r = E.sigmoid(E.add(in_gate(b, j, 0), hidden_gate(b, j, 0)))
        z = E.sigmoid(E.add(in_gate(b, j, 1), hidden_gate(b, j, 1)))
        cand = E.tanh(E.add(in_gate(b, j, 2), E.mul(r, hidden_gate(b, j, 2))))
        value = E.mul(E.sub(1, z), cand)
        if h is not None:
            value = E.add(value, E.mul(z, h.ref(b, j)))
        return Assign(new_h.ref(b, j), value)

    ctx.em.block((n, hidden), body)
    return new_h


def _cell_params(ctx, m, suffix=""):
    w_ih = ctx.known(getattr(m, f"weight_ih{suffix}"))
    w_hh = ctx.known(getattr(m, f"weight_hh{suffix}"))
    b_ih = ctx.maybe_known(getattr(m, f"bias_ih{suffix}", None)) if m.bias else None
    b_hh = ctx.maybe_known(getattr(m, f"bias_hh{suffix}", None)) if m.bias else None
    return w_ih, w_hh, b_ih, b_hh


def _dtype(real) -> str:
    while isinstance(real, tuple | list):
        real = real[0]
    return leir_dtype(real.dtype)


@op("lstm_cell", modules=(nn.LSTMCell,))
def lstm_cell(ctx, m, x, hx=None):
    if x.ndim != 2:
        raise UnsupportedOperatorError("LSTMCell", detail="unbatched input")
    h, c = (None, None) if hx is None else hx
    dtype = _dtype(ctx.real)
    return lstm_step(ctx, dtype, lambda b, k: x.ref(b, k), x.shape[1], x.shape[0], m.hidden_size,
                     *_cell_params(ctx, m), h, c)


@op("gru_cell", modules=(nn.GRUCell,))
def gru_cell(ctx, m, x, hx=None):
    if x.ndim != 2:
        raise UnsupportedOperatorError("GRUCell", detail="unbatched input")
    return gru_step(ctx, _dtype(ctx.real), lambda b, k: x.ref(b, k), x.shape[1], x.shape[0], m.hidden_size,
                    *_cell_params(ctx, m), hx)


def _stack_rows(ctx, parts, dtype, shape, place):
    """A tensor of ``shape`` assembled from per-step/per-direction ``[N, H]`` pieces."""
    out = ctx.em.fresh(shape, dtype)
    for key, piece in parts:
        ctx.em.block(piece.shape, lambda b, j, key=key, piece=piece: Assign(out.ref(*place(key, b, j)),
                                                                             piece.ref(b, j)))
    return out


@op("rnn", modules=(nn.LSTM, nn.GRU))
def rnn(ctx, m, x, hx=None):
    kind = "LSTM" if isinstance(m, nn.LSTM) else "GRU"
    if x.ndim != 3:
        raise UnsupportedOperatorError(kind, detail="unbatched input")
    if getattr(m, "proj_size", 0):
        raise UnsupportedOperatorError(kind, detail="proj_size")
    if m.training and m.dropout and m.num_layers > 1:
        raise UnsupportedOperatorError(kind, detail="dropout between layers in training mode")
    dtype = _dtype(ctx.real)
    bf = m.batch_first
    steps, n = (x.shape[1], x.shape[0]) if bf else (x.shape[0], x.shape[1])
    hidden, dirs = m.hidden_size, 2 if m.bidirectional else 1
    if kind == "LSTM":
        h0, c0 = (None, None) if hx is None else hx
    else:
        h0, c0 = hx, None

    def initial(state, index):
        return None if state is None else _slice0(ctx, state, index, dtype)

    layer_in = None  # per-step [N, D*H] outputs of the previous layer: dict t -> list of pieces
    finals_h, finals_c = [], []
    for layer in range(m.num_layers):
        outs: dict[int, list[Tensor]] = {t: [None] * dirs for t in range(steps)}
        for d in range(dirs):
            suffix = f"_l{layer}" + ("_reverse" if d else "")
            params = _cell_params(ctx, m, suffix)
            h = initial(h0, layer * dirs + d)
            c = initial(c0, layer * dirs + d) if kind == "LSTM" else None
            order = range(steps - 1, -1, -1) if d else range(steps)
            for t in order:
                if layer_in is None:
                    def x_read(b, k, t=t):
                        return x.ref(b, t, k) if bf else x.ref(t, b, k)
                    in_size = x.shape[2]
                else:
                    previous = layer_in[t]

                    def x_read(b, k, previous=previous):
                        return previous.ref(b, k)
                    in_size = dirs * hidden
                if kind == "LSTM":
                    h, c = lstm_step(ctx, dtype, x_read, in_size, n, hidden, *params, h, c)
                else:
                    h = gru_step(ctx, dtype, x_read, in_size, n, hidden, *params, h)
                outs[t][d] = h
            finals_h.append(h)
            finals_c.append(c)
        layer_in = {t: _joined(ctx, pieces, dtype) for t, pieces in outs.items()}
    out_shape = (n, steps, dirs * hidden) if bf else (steps, n, dirs * hidden)
    parts = [((t, d), outs[t][d]) for t in range(steps) for d in range(dirs)]

    def place(key, b, j):
        t, d = key
        col = E.iadd(j, d * hidden)
        return (b, E.lit(t), col) if bf else (E.lit(t), b, col)

    output = _stack_rows(ctx, parts, dtype, out_shape, place)
    h_n = _stack_rows(ctx, list(enumerate(finals_h)), dtype, (len(finals_h), n, hidden),
                      lambda k, b, j: (E.lit(k), b, j))
    if kind == "GRU":
        return (output, h_n)
    c_n = _stack_rows(ctx, list(enumerate(finals_c)), dtype, (len(finals_c), n, hidden),
                      lambda k, b, j: (E.lit(k), b, j))
    return (output, (h_n, c_n))


def _joined(ctx, pieces: list[Tensor], dtype: str) -> Tensor:
    """One step's ``[N, H]`` outputs of every direction side by side, ``[N, D*H]``: the next layer's input
    (a bidirectional layer feeds ``[forward, backward]``)."""
    if len(pieces) == 1:
        return pieces[0]
    n, hidden = pieces[0].shape
    return _stack_rows(ctx, list(enumerate(pieces)), dtype, (n, len(pieces) * hidden),
                       lambda d, b, j: (b, E.iadd(j, d * hidden)))


def _slice0(ctx, state: Tensor, index: int, dtype: str) -> Tensor:
    """``state[index]`` of an initial ``[layers*dirs, N, H]`` state, as an ``[N, H]`` tensor."""
    out = ctx.em.fresh(state.shape[1:], dtype)
    ctx.em.block(state.shape[1:], lambda b, j: Assign(out.ref(b, j), state.ref(index, b, j)))
    return out
