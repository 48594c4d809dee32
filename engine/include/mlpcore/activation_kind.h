#pragma once
// The activation functions of the format. Kept free of includes so device code can use it too.
namespace mlpcore {
enum class ActivationKind { none, relu, leaky_relu, sigmoid, tanh, softplus, exponential, sine, silu };
}
