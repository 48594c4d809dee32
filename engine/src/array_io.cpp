#include "mlpcore/array_io.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <optional>

#include "engine/src/file_io.h"
#include "mlpcore/error.h"
#include "ops/half_bits.h"

namespace mlpcore {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

// The .npy header is a Python dict literal such as {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }.
// This reader accepts exactly that grammar.
class HeaderReader {
 public:
  HeaderReader(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  std::string descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<std::uint64_t>> shape;

  void read() {
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = read_string();
      expect(':');
      if (key == "descr") descr = read_string();
      else if (key == "fortran_order") fortran_order = read_bool();
      else if (key == "shape") shape = read_tuple();
      else fail("unknown key '" + key + "'");
      skip_space();
      if (peek() == ',') ++pos_;
      else if (peek() != '}') fail("expected ',' or '}'");
    }
    ++pos_;
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the dict");
    if (descr.empty() || !fortran_order || !shape) fail("needs the keys 'descr', 'fortran_order' and 'shape'");
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const {
    throw Error(ErrorCode::header_json, source_, "npy header", problem + " at character " + std::to_string(pos_));
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t')) ++pos_;
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void expect(char c) {
    skip_space();
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string read_string() {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail("expected a quoted string");
    const auto end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string s(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return s;
  }
  bool read_bool() {
    skip_space();
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}})
      if (text_.substr(pos_, std::strlen(word)) == word) {
        pos_ += std::strlen(word);
        return value;
      }
    fail("expected True or False");
  }
  std::vector<std::uint64_t> read_tuple() {
    expect('(');
    std::vector<std::uint64_t> dims;
    while (true) {
      skip_space();
      if (peek() == ')') break;
      if (dims.size() == 8) fail("too many dimensions");
      std::uint64_t d = 0;
      const auto [ptr, ec] = std::from_chars(text_.data() + pos_, text_.data() + text_.size(), d);
      if (ec != std::errc()) fail("expected a dimension");
      pos_ = static_cast<std::size_t>(ptr - text_.data());
      dims.push_back(d);
      skip_space();
      if (peek() == ',') ++pos_;
      else if (peek() != ')') fail("expected ',' or ')'");
    }
    ++pos_;
    return dims;
  }

  std::string_view text_;
  const std::string& source_;
  std::size_t pos_ = 0;
};

std::uint64_t read_le(std::span<const std::byte> bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = bytes.size(); i-- > 0;) v = (v << 8) | std::to_integer<std::uint64_t>(bytes[i]);
  return v;
}

}  // namespace

Matrix parse_npy(std::span<const std::byte> bytes, const std::string& source) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0)
    throw Error(ErrorCode::header_json, source, "", "not a .npy file (no \\x93NUMPY magic)");
  const auto major = std::to_integer<int>(bytes[6]);
  if (major < 1 || major > 3) throw Error(ErrorCode::header_json, source, "npy version", "unsupported version " + std::to_string(major));
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + len_bytes) throw Error(ErrorCode::truncated, source, "npy header", "file ends inside the header length");
  const std::uint64_t header_len = read_le(bytes.subspan(8, len_bytes));
  const std::size_t data_start = 8 + len_bytes + header_len;
  if (data_start > bytes.size()) throw Error(ErrorCode::truncated, source, "npy header", "file ends inside the header");
  const std::string_view header(reinterpret_cast<const char*>(bytes.data()) + 8 + len_bytes, header_len);

  HeaderReader reader(header, source);
  reader.read();
  if (*reader.fortran_order)
    throw Error(ErrorCode::shape, source, "fortran_order", "Fortran-order arrays are not supported; save a C-order array");
  std::size_t item = 0;
  if (reader.descr == "<f4") item = 4;
  else if (reader.descr == "<f2") item = 2;
  else if (reader.descr == "<f8") item = 8;
  else throw Error(ErrorCode::dtype, source, "descr", "'" + reader.descr + "' is not supported (use little-endian float32, float16 or float64)");

  const auto& shape = *reader.shape;
  if (shape.empty() || shape.size() > 2)
    throw Error(ErrorCode::shape, source, "shape", "must be [batch, features] or [features], got " + std::to_string(shape.size()) + " dimensions");
  Matrix m;
  m.rows = shape.size() == 2 ? shape[0] : 1;
  m.cols = shape.back();
  if (m.rows == 0 || m.cols == 0) throw Error(ErrorCode::shape, source, "shape", "the array is empty");
  const std::uint64_t available = bytes.size() - data_start;
  if (m.cols > available / item || m.rows > available / item / m.cols || m.rows * m.cols * item != available)
    throw Error(ErrorCode::truncated, source, "data",
                std::to_string(available) + " data bytes do not match shape " + std::to_string(m.rows) + "x" + std::to_string(m.cols) +
                    " of " + std::to_string(item) + "-byte values");

  m.values.resize(m.rows * m.cols);
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + data_start);
  for (std::size_t i = 0; i < m.values.size(); ++i) {
    if (item == 4) {
      std::memcpy(&m.values[i], p + 4 * i, 4);
    } else if (item == 2) {
      m.values[i] = ops::f16_bits_to_float(static_cast<std::uint16_t>(p[2 * i] | (p[2 * i + 1] << 8)));
    } else {
      double d;
      std::memcpy(&d, p + 8 * i, 8);
      m.values[i] = static_cast<float>(d);
    }
  }
  return m;
}

Matrix read_npy(const std::filesystem::path& path) { return parse_npy(read_file(path, kMaxNpyFileBytes), path.string()); }

Matrix read_matrix(const std::filesystem::path& path) {
  const auto bytes = read_file(path, kMaxNpyFileBytes);
  if (bytes.size() >= 6 && std::memcmp(bytes.data(), kMagic, 6) == 0) return parse_npy(bytes, path.string());
  return parse_text(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), path.string());
}

std::vector<std::byte> serialize_npy(const Matrix& m) {
  if (m.values.size() != m.rows * m.cols)
    throw Error(ErrorCode::invalid_argument, "write_npy", "values", "size does not match rows*cols");
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(m.rows) + ", " +
                       std::to_string(m.cols) + "), }";
  header.append(63 - (10 + header.size()) % 64, ' ');  // total header a multiple of 64, ending in '\n'
  header += '\n';
  std::vector<std::byte> out(10 + header.size() + 4 * m.values.size());
  std::memcpy(out.data(), kMagic, 6);
  out[6] = std::byte{1};
  out[7] = std::byte{0};
  out[8] = static_cast<std::byte>(header.size() & 0xffu);
  out[9] = static_cast<std::byte>(header.size() >> 8);
  std::memcpy(out.data() + 10, header.data(), header.size());
  std::memcpy(out.data() + 10 + header.size(), m.values.data(), 4 * m.values.size());
  return out;
}

void write_npy(const std::filesystem::path& path, const Matrix& m) { write_file_atomically(path, serialize_npy(m)); }

void write_matrix(const std::filesystem::path& path, const Matrix& m) {
  std::string ext = path.extension().string();
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".npy") return write_npy(path, m);
  const std::string text = format_text(m);
  write_file_atomically(path, std::as_bytes(std::span(text.data(), text.size())));
}

namespace {

// Half an ulp above FLT_MAX: decimals from here on round to infinity in float32 (ties to even), those
// below it to at most FLT_MAX (as "3.40282347e+38", which format_text writes for FLT_MAX, does).
constexpr double kFloat32Overflow = 0x1.ffffffp+127;

// A decimal float as parse_text reads it, or nothing. from_chars refuses a leading '+' and reports
// underflow as out of range; both are ordinary in files people write. Beyond float32's range is nothing,
// "inf" and "nan" spelled out are values.
std::optional<float> parse_float(std::string_view token) {
  if (token.size() > 1 && token[0] == '+' && token[1] != '-' && token[1] != '+') token.remove_prefix(1);
  double v = 0.0;
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  if (ptr != token.data() + token.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    v = std::strtod(std::string(token).c_str(), nullptr);  // 0 (underflow) or +-HUGE_VAL (overflow)
    if (std::isinf(v)) return std::nullopt;
  } else if (ec != std::errc()) {
    return std::nullopt;
  }
  if (std::isfinite(v) && std::fabs(v) >= kFloat32Overflow) return std::nullopt;
  return static_cast<float>(v);
}

}  // namespace

Matrix parse_text(std::string_view text, const std::string& source) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // UTF-8 byte order mark
  Matrix m;
  std::size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const auto eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    line = line.substr(0, line.find('#'));
    std::size_t count = 0;
    std::size_t pos = 0;
    while (true) {
      pos = line.find_first_not_of(" \t\r,", pos);
      if (pos == std::string_view::npos) break;
      const std::size_t end = std::min(line.find_first_of(" \t\r,", pos), line.size());
      const std::string_view token = line.substr(pos, end - pos);
      const auto v = parse_float(token);
      if (!v)
        throw Error(ErrorCode::invalid_argument, source, "line " + std::to_string(line_no),
                    "'" + std::string(token) + "' is not a number within float32's range");
      m.values.push_back(*v);
      ++count;
      pos = end;
    }
    if (count == 0) continue;
    if (m.rows > 0 && count != m.cols)
      throw Error(ErrorCode::shape, source, "line " + std::to_string(line_no),
                  "has " + std::to_string(count) + " values but earlier lines have " + std::to_string(m.cols));
    m.cols = count;
    ++m.rows;
  }
  if (m.rows == 0) throw Error(ErrorCode::shape, source, "", "no samples (expected one sample per line)");
  return m;
}

std::string format_text(const Matrix& m) {
  std::string out;
  char buf[32];
  for (std::size_t r = 0; r < m.rows; ++r) {
    for (std::size_t c = 0; c < m.cols; ++c) {
      std::snprintf(buf, sizeof buf, c ? " %.9g" : "%.9g", static_cast<double>(m.values[r * m.cols + c]));
      out += buf;
    }
    out += '\n';
  }
  return out;
}

}  // namespace mlpcore
