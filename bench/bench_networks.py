"""The networks the benchmarks build: 'a-bxc-d' is a inputs, c hidden layers of width b (ReLU), d outputs (none)."""
import argparse

from torch import nn


def parse_network(name):
    """'32-64x4-16' -> ('32-64x4-16', 32, 64, 4, 16); an argparse error for anything else."""
    try:
        inp, middle, out = name.split("-")
        width, hidden = middle.split("x")
        return (name, int(inp), int(width), int(hidden), int(out))
    except ValueError:
        raise argparse.ArgumentTypeError(f"network '{name}': expected input-widthxhidden-output, e.g. 32-64x4-16")


def make_net(inp, width, hidden, out):
    layers, prev = [], inp
    for _ in range(hidden):
        layers += [nn.Linear(prev, width), nn.ReLU()]
        prev = width
    layers.append(nn.Linear(prev, out))
    return nn.Sequential(*layers).eval()
