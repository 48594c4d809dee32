// libFuzzer target: the .npy and text readers. Each input goes to both. Either rejects it with
// mlpcore::Error or returns a matrix that must survive its writer: .npy bit for bit, text value for value
// (%.9g is exact for float32; NaN reads back as NaN of the same sign). Anything else is a crash.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mlpcore/array_io.h"
#include "mlpcore/error.h"

namespace {

using mlpcore::Matrix;

[[noreturn]] void fail(const char* reader, const char* what, std::size_t index = 0) {
  std::fprintf(stderr, "fuzz_arrays: %s round trip changed %s (element %zu)\n", reader, what, index);
  std::abort();
}

void check_shape(const char* reader, const Matrix& m, const Matrix& back) {
  if (m.rows == 0 || m.cols == 0 || m.values.size() != m.rows * m.cols) fail(reader, "nothing: the parsed matrix is inconsistent");
  if (back.rows != m.rows || back.cols != m.cols) fail(reader, "the shape");
  if (back.values.size() != m.values.size()) fail(reader, "the number of values");
}

void npy(std::span<const std::byte> bytes) {
  Matrix m;
  try {
    m = mlpcore::parse_npy(bytes, "fuzz.npy");
  } catch (const mlpcore::Error& e) {
    if (std::getenv("MLPCORE_FUZZ_VERBOSE")) std::fprintf(stderr, "%s\n", e.what());
    return;
  }
  if (std::getenv("MLPCORE_FUZZ_VERBOSE")) std::fprintf(stderr, "fuzz: read %zux%zu\n", m.rows, m.cols);
  const Matrix back = mlpcore::parse_npy(mlpcore::serialize_npy(m), "fuzz round trip.npy");
  check_shape("npy", m, back);
  if (std::memcmp(m.values.data(), back.values.data(), m.values.size() * sizeof(float)) != 0) fail("npy", "the values' bits");
}

void text(std::string_view chars) {
  Matrix m;
  try {
    m = mlpcore::parse_text(chars, "fuzz.txt");
  } catch (const mlpcore::Error& e) {
    if (std::getenv("MLPCORE_FUZZ_VERBOSE")) std::fprintf(stderr, "%s\n", e.what());
    return;
  }
  if (std::getenv("MLPCORE_FUZZ_VERBOSE")) std::fprintf(stderr, "fuzz: read %zux%zu\n", m.rows, m.cols);
  const Matrix back = mlpcore::parse_text(mlpcore::format_text(m), "fuzz round trip.txt");
  check_shape("text", m, back);
  for (std::size_t i = 0; i < m.values.size(); ++i) {
    const float a = m.values[i], b = back.values[i];
    const bool same = std::isnan(a) ? std::isnan(b) && std::signbit(a) == std::signbit(b)
                                    : std::memcmp(&a, &b, sizeof a) == 0;  // -0 stays -0
    if (!same) fail("text", "a value", i);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  npy(std::span<const std::byte>(reinterpret_cast<const std::byte*>(data), size));
  text(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
