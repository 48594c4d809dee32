// Prints the model's outputs for the inputs given as arguments, on the default backend.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <mlpcore/mlpcore.h>

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  try {
    const mlpcore::Network net(mlpcore::load_model(argv[1]));
    std::vector<float> input;
    for (int i = 2; i < argc; ++i) input.push_back(std::strtof(argv[i], nullptr));
    for (float v : net.infer(input)) std::printf("%.6f\n", static_cast<double>(v));
    std::printf("mlpcore %s on %s\n", mlpcore::kVersionString, net.backend().name.c_str());
    return 0;
  } catch (const mlpcore::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
