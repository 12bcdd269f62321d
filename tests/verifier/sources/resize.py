"""F.interpolate at sizes set by --set (MODE, SCALE, ALIGN, CHANNELS, DEPTH, SIDE): the resize cases of
tests/verifier/test_resize_against_torch.py and bench/resize.py (issue 45)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

MODE = "bicubic"
SCALE = 2.0
ALIGN = 0
CHANNELS = 2
DEPTH = 4
SIDE = 8

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.interpolate(x, scale_factor=SCALE, mode=MODE, align_corners=bool(ALIGN))

def get_inputs():
    if MODE == "trilinear":
        return [torch.randn(1, CHANNELS, DEPTH, SIDE, SIDE)]
    return [torch.randn(1, CHANNELS, DEPTH, SIDE)]

def get_init_inputs():
    return []
