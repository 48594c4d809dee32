// The main job of the README: load the bundled heart SDF model, evaluate it on a grid with the default
// backend, and draw the shape it learned in the terminal. Also the smallest example of the C++ API.
#include <cstdio>
#include <string>
#include <vector>

#include "mlpcore/mlpcore.h"

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : MLPCORE_SAMPLE_MODEL;
  const std::string backend = argc > 2 ? argv[2] : "auto";
  try {
    const mlpcore::Model model = mlpcore::load_model(path);
    if (model.input_dim() != 2 || model.output_dim() != 1) {
      std::fprintf(stderr, "sdf_demo: %s maps %zu -> %zu values; a 2-D SDF maps 2 -> 1\n", path.c_str(), model.input_dim(), model.output_dim());
      return 2;
    }
    const mlpcore::Network net(model, backend);

    constexpr int kCols = 64, kRows = 32;  // terminal cells are about twice as tall as wide
    std::vector<float> points;
    for (int r = 0; r < kRows; ++r)
      for (int c = 0; c < kCols; ++c) {
        points.push_back(-1.0f + (2.0f * static_cast<float>(c) + 1.0f) / kCols);
        points.push_back(1.0f - (2.0f * static_cast<float>(r) + 1.0f) / kRows);
      }
    const std::vector<float> sdf = net.infer(points);

    std::printf("%s on backend '%s': %zu layers, %zu parameters, %zu points\n", path.c_str(), net.backend().name.c_str(),
                model.layers.size(), model.parameter_count(), sdf.size());
    std::printf("'#' inside (sdf < -0.02), '+' on the boundary, '.' near it (sdf < 0.1)\n");
    for (int r = 0; r < kRows; ++r) {
      std::string line;
      for (int c = 0; c < kCols; ++c) {
        const float d = sdf[static_cast<std::size_t>(r * kCols + c)];
        line += d < -0.02f ? '#' : d < 0.02f ? '+' : d < 0.1f ? '.' : ' ';
      }
      std::printf("|%s|\n", line.c_str());
    }
    const float centre = net.infer(std::vector<float>{0.0f, 0.0f})[0];
    std::printf("sdf(0, 0) = %.4f (inside: negative)\n", static_cast<double>(centre));
    return 0;
  } catch (const mlpcore::Error& e) {
    std::fprintf(stderr, "sdf_demo: error: %s\n", e.what());
    return 2;
  }
}
