"""The networks the benchmarks build: 'a-bxc-d' is a inputs, c hidden layers of width b (ReLU, or the
activation --activation names), d outputs (none, or --output-activation's); 'a-b-c-...-z' names every width
(a inputs, hidden layers b, c, ..., z outputs)."""
import argparse
import os
import sys

from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "export"))
from mlpcore_export import Sine  # noqa: E402

# The activation modules by name (models/FORMAT.md's names): the hidden layers' and the output layer's.
ACTIVATIONS = {"relu": nn.ReLU, "leaky_relu": nn.LeakyReLU, "sigmoid": nn.Sigmoid, "tanh": nn.Tanh,
               "softplus": nn.Softplus, "silu": nn.SiLU, "sine": Sine}


def parse_network(name):
    """'32-64x4-16' -> ('32-64x4-16', 32, 64, 4, 16): input, hidden width x hidden layers, output; or every
    width, '32-128-64-32-1' -> ('32-128-64-32-1', 32, [128, 64, 32], 3, 1); an argparse error for anything else."""
    try:
        dims = name.split("-")
        if len(dims) == 3 and "x" in dims[1]:
            width, hidden = dims[1].split("x")
            return (name, int(dims[0]), int(width), int(hidden), int(dims[2]))
        if len(dims) >= 2 and "x" not in name:
            return (name, int(dims[0]), [int(d) for d in dims[1:-1]], len(dims) - 2, int(dims[-1]))
        raise ValueError(name)
    except ValueError:
        raise argparse.ArgumentTypeError(f"network '{name}': expected input-widthxhidden-output, e.g. 32-64x4-16, "
                                         "or every width, e.g. 32-128-64-32-1")


def make_net(inp, width, hidden, out, activation="relu", output_activation="none"):
    """Hidden layers of `width` (one width, or a list of each layer's) with `activation` (ACTIVATIONS), an
    output layer with `output_activation` (ACTIVATIONS, or none: linear)."""
    widths = width if isinstance(width, list) else [width] * hidden
    layers, prev = [], inp
    for w in widths:
        layers += [nn.Linear(prev, w), ACTIVATIONS[activation]()]
        prev = w
    layers.append(nn.Linear(prev, out))
    if output_activation != "none":
        layers.append(ACTIVATIONS[output_activation]())
    return nn.Sequential(*layers).eval()
