"""Export a PyTorch MLP to an mlpcore model file (models/FORMAT.md), and read one back.

    from mlpcore_export import export, Sine, Exponential
    net = torch.nn.Sequential(torch.nn.Linear(3, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    export(net, "model.safetensors", dtype="F16")

The network is an nn.Sequential (nested ones are flattened) of nn.Linear layers, each followed by at
most one activation module: ReLU, LeakyReLU, Sigmoid, Tanh, Softplus, SiLU, Identity, or this module's
Sine and Exponential. Dropout is skipped (inference). Anything else raises ValueError naming the module.
"""
import json
import struct

import numpy as np
import torch
from torch import nn

FORMAT_VERSION = 1
DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


class Sine(nn.Module):
    """sin(x): mlpcore's "sine" activation (fold any SIREN frequency into the preceding Linear)."""

    def forward(self, x):
        return torch.sin(x)


class Exponential(nn.Module):
    """exp(x): mlpcore's "exponential" activation."""

    def forward(self, x):
        return torch.exp(x)


# The parameter ranges the loader accepts (models/FORMAT.md).
PARAM_RANGES = {"alpha": (-1e3, 1e3), "beta": (1e-3, 1e4)}


def _param(where, name, value):
    low, high = PARAM_RANGES[name]
    if not low <= float(value) <= high:
        raise ValueError(f"{where}: {name} {value} is outside mlpcore's supported range [{low:g}, {high:g}]")
    return float(value)


def _activation_of(module, where):
    if isinstance(module, nn.ReLU):
        return "relu"
    if isinstance(module, nn.LeakyReLU):
        return {"name": "leaky_relu", "alpha": _param(where, "alpha", module.negative_slope)}
    if isinstance(module, nn.Sigmoid):
        return "sigmoid"
    if isinstance(module, nn.Tanh):
        return "tanh"
    if isinstance(module, nn.Softplus):
        # mlpcore's softplus has no threshold; PyTorch's default (20) changes results by < 2e-9 / beta.
        return {"name": "softplus", "beta": _param(where, "beta", module.beta)}
    if isinstance(module, nn.SiLU):
        return "silu"
    if isinstance(module, Sine):
        return "sine"
    if isinstance(module, Exponential):
        return "exponential"
    raise ValueError(f"{where}: {type(module).__name__} is not supported by mlpcore")


def _flatten(module, prefix="model"):
    if isinstance(module, nn.Sequential):
        for name, child in module.named_children():
            yield from _flatten(child, f"{prefix}.{name}")
    else:
        yield prefix, module


def layers_of(model):
    """[(nn.Linear, activation)] where activation is a name or {"name": ..., param: ...}."""
    layers = []
    last_was_linear = False
    for where, module in _flatten(model):
        if isinstance(module, (nn.Identity, nn.Dropout)):
            continue
        if isinstance(module, nn.Linear):
            layers.append([module, "none"])
            last_was_linear = True
            continue
        activation = _activation_of(module, where)
        if not last_was_linear:
            raise ValueError(f"{where}: activation {type(module).__name__} must directly follow an nn.Linear")
        layers[-1][1] = activation
        last_was_linear = False
    if not layers:
        raise ValueError("model: no nn.Linear layers")
    for i in range(1, len(layers)):
        if layers[i][0].in_features != layers[i - 1][0].out_features:
            raise ValueError(f"layer {i}: takes {layers[i][0].in_features} inputs, "
                             f"layer {i - 1} produces {layers[i - 1][0].out_features}")
    return layers


def _tensor_bytes(tensor, dtype):
    t = tensor.detach().to("cpu", DTYPES[dtype]).contiguous()
    if not torch.isfinite(t.float()).all():
        raise ValueError(f"weights do not fit {dtype} (non-finite after conversion)")
    if dtype == "BF16":
        return t.view(torch.int16).numpy().astype("<i2").tobytes()
    return t.numpy().astype("<f4" if dtype == "F32" else "<f2").tobytes()


def write_safetensors(path, tensors, metadata):
    """tensors: [(name, dtype, shape, bytes)]; metadata: {str: str}."""
    header = {"__metadata__": metadata}
    offset = 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, _, _, data in tensors:
            f.write(data)


def _string_metadata(metadata):
    """safetensors metadata maps strings to strings: numbers and booleans become their JSON text ("epochs":
    10 -> "10"), lists and dicts their JSON; anything else, or a key that is not a string, is refused here
    rather than written into a file the loader would reject."""
    out = {}
    for key, value in metadata.items():
        if not isinstance(key, str):
            raise TypeError(f"metadata key {key!r}: keys must be strings")
        if key == "mlpcore":
            raise ValueError("metadata key 'mlpcore' is reserved for the network description")
        if isinstance(value, str):
            out[key] = value
        elif value is None or isinstance(value, (bool, int, float, list, dict)):
            try:
                out[key] = json.dumps(value, allow_nan=False)
            except TypeError as e:
                raise TypeError(f"metadata {key!r}: {e}") from None
            except ValueError as e:
                raise ValueError(f"metadata {key!r}: {e}") from None
        else:
            raise TypeError(f"metadata {key!r}: {type(value).__name__} cannot be stored (use str, int, float, bool, list or dict)")
    return out


def export(model, path, dtype="F32", metadata=None):
    """Writes `model` to `path`; dtype is "F32", "F16" or "BF16" for every tensor."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype {dtype!r}: use one of {sorted(DTYPES)}")
    tensors, activations = [], []
    for i, (linear, activation) in enumerate(layers_of(model)):
        tensors.append((f"layers.{i}.weight", dtype, tuple(linear.weight.shape), _tensor_bytes(linear.weight, dtype)))
        if linear.bias is not None:
            tensors.append((f"layers.{i}.bias", dtype, tuple(linear.bias.shape), _tensor_bytes(linear.bias, dtype)))
        activations.append(activation)
    meta = _string_metadata(metadata or {})
    meta["mlpcore"] = json.dumps({"version": FORMAT_VERSION, "activations": activations})
    write_safetensors(path, tensors, meta)


def _module_for(activation):
    name = activation if isinstance(activation, str) else activation["name"]
    if name == "leaky_relu":
        return nn.LeakyReLU(activation.get("alpha", 0.01) if isinstance(activation, dict) else 0.01)
    if name == "softplus":
        return nn.Softplus(beta=activation.get("beta", 1.0) if isinstance(activation, dict) else 1.0)
    return {"none": nn.Identity, "relu": nn.ReLU, "sigmoid": nn.Sigmoid, "tanh": nn.Tanh, "silu": nn.SiLU,
            "sine": Sine, "exponential": Exponential}[name]()


def load(path):
    """Reads an mlpcore model file back into a float32 nn.Sequential (for fine-tuning or comparison)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    activations = json.loads(header["__metadata__"]["mlpcore"])["activations"]

    def tensor(name):
        entry = header.get(name)
        if entry is None:
            return None
        begin, end = entry["data_offsets"]
        raw = np.frombuffer(body[begin:end], dtype={"F32": "<f4", "F16": "<f2", "BF16": "<u2"}[entry["dtype"]])
        if entry["dtype"] == "BF16":
            raw = (raw.astype(np.uint32) << 16).view(np.float32)
        return torch.from_numpy(raw.astype(np.float32).reshape(entry["shape"]))

    modules = []
    for i, activation in enumerate(activations):
        weight, bias = tensor(f"layers.{i}.weight"), tensor(f"layers.{i}.bias")
        linear = nn.Linear(weight.shape[1], weight.shape[0])
        with torch.no_grad():
            linear.weight.copy_(weight)
            linear.bias.copy_(bias if bias is not None else torch.zeros(weight.shape[0]))
        modules += [linear, _module_for(activation)]
    return nn.Sequential(*modules)
