#pragma once
// Reading and writing batches of samples: NumPy .npy files and plain text, as used by the CLI.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mlpcore {

// A row-major [rows, cols] float32 matrix: one sample per row.
struct Matrix {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<float> values;
};

inline constexpr std::uint64_t kMaxNpyFileBytes = 4ull << 30;  // 4 GiB

// Accepts little-endian float32, float16 or float64 in C order, shape [batch, n] or [n] (one sample).
// Errors name the file and what is wrong (dtype, order, shape, size).
Matrix read_npy(const std::filesystem::path& path);
Matrix parse_npy(std::span<const std::byte> bytes, const std::string& source);

// Reads a .npy file (recognised by its magic bytes) or else a text file as parse_text describes.
Matrix read_matrix(const std::filesystem::path& path);

// Writes float32 [rows, cols] in .npy format version 1.0 (atomically, like save_model).
void write_npy(const std::filesystem::path& path, const Matrix& matrix);
std::vector<std::byte> serialize_npy(const Matrix& matrix);

// One sample per non-empty line, values separated by spaces, tabs or commas; '#' starts a comment; a
// UTF-8 byte order mark is skipped. Values are decimal floats ("+1", "1e-50" -> 0 and subnormals included);
// beyond float32's range is an error.
Matrix parse_text(std::string_view text, const std::string& source);
std::string format_text(const Matrix& matrix);

// Writes .npy when the path ends in ".npy" in any case, text otherwise; atomically, like write_npy.
void write_matrix(const std::filesystem::path& path, const Matrix& matrix);

}  // namespace mlpcore
