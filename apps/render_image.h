#pragma once
// Host side of the renderers: batched sphere tracing through any SDF evaluator, shading, PNG output,
// the analytic torus the sample model was trained on, and image comparison.
#include <functional>
#include <string>
#include <vector>

#include "apps/render_camera.h"

namespace mlpcore::render {

using Sdf = std::function<std::vector<float>(const std::vector<float>& points)>;

// t (negative on a miss) and the SDF gradient per pixel, 4 floats, all rays marching in one batch a step.
std::vector<float> trace_batched(const Camera& cam, const Sdf& sdf);
std::vector<float> true_torus_batch(const std::vector<float>& points);  // models/make_samples.py's torus

std::vector<unsigned char> shade(const Camera& cam, const std::vector<float>& traced);  // RGB8
void write_png(const std::string& path, const Camera& cam, const std::vector<unsigned char>& rgb);

struct ImageDifference {
  double mean;             // mean over pixels of the largest channel difference, of 255
  double percent_over_16;  // pixels whose largest channel difference exceeds 16
};
ImageDifference compare_images(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b);

}  // namespace mlpcore::render
