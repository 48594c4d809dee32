// .npy and text batches: round trips, accepted dtypes, and clear errors for everything else.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include "mlpcore/array_io.h"
#include "mlpcore/error.h"
#include "ops/half_bits.h"
#include "tests/test_util.h"

namespace mlpcore {
namespace {

using Bytes = std::vector<std::byte>;

Bytes npy(const std::string& header, const Bytes& data, int version = 1) {
  Bytes out;
  const char magic[] = "\x93NUMPY";
  for (int i = 0; i < 6; ++i) out.push_back(static_cast<std::byte>(magic[i]));
  out.push_back(static_cast<std::byte>(version));
  out.push_back(std::byte{0});
  const std::size_t len_bytes = version == 1 ? 2 : 4;
  for (std::size_t i = 0; i < len_bytes; ++i) out.push_back(static_cast<std::byte>((header.size() >> (8 * i)) & 0xffu));
  for (char c : header) out.push_back(static_cast<std::byte>(c));
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

template <class T>
Bytes raw(const std::vector<T>& values) {
  Bytes b(values.size() * sizeof(T));
  std::memcpy(b.data(), values.data(), b.size());
  return b;
}

TEST(ArrayIo, NpyRoundTripIsExact) {
  std::mt19937 rng(1);
  Matrix m{7, 3, test::random_inputs(rng, 21, -1e30f, 1e30f)};
  test::TempDir dir;
  write_npy(dir / "a.npy", m);
  const Matrix back = read_npy(dir / "a.npy");
  EXPECT_EQ(back.rows, 7u);
  EXPECT_EQ(back.cols, 3u);
  EXPECT_EQ(back.values, m.values);
  const Bytes bytes = serialize_npy(m);
  EXPECT_EQ((bytes.size() - 4 * 21) % 64, 0u) << "header padded to 64 bytes like NumPy";
}

TEST(ArrayIo, AcceptsFloat16Float64OneDimensionalAndVersion2) {
  const std::vector<double> d = {1.5, -2.25, 3.0, 4.0, 0.1, -0.1};
  const Matrix m64 = parse_npy(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }\n", raw(d)), "x");
  ASSERT_EQ(m64.rows, 2u);
  for (std::size_t i = 0; i < d.size(); ++i) EXPECT_EQ(m64.values[i], static_cast<float>(d[i]));

  const std::vector<std::uint16_t> h = {0x3c00, 0xc000, 0x3555};
  const Matrix m16 = parse_npy(npy("{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }", raw(h), 2), "x");
  EXPECT_EQ(m16.rows, 1u);
  EXPECT_EQ(m16.cols, 3u);
  EXPECT_EQ(m16.values[0], 1.0f);
  EXPECT_EQ(m16.values[1], -2.0f);
  EXPECT_EQ(m16.values[2], ops::f16_bits_to_float(0x3555));
}

struct BadNpy {
  std::string name;
  Bytes bytes;
  ErrorCode code;
  std::string needle;
};

TEST(ArrayIo, MalformedNpyFilesFailWithClearErrors) {
  const Bytes four = raw(std::vector<float>{1, 2, 3, 4});
  const std::vector<BadNpy> cases = {
      {"no magic", Bytes(20), ErrorCode::header_json, "not a .npy file"},
      {"version 9", npy("{}", {}, 9), ErrorCode::header_json, "unsupported version 9"},
      {"header past end", [] { Bytes b = npy("{'descr': '<f4'}", {}); b[8] = std::byte{200}; return b; }(), ErrorCode::truncated, "inside the header"},
      {"int32", npy("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", four), ErrorCode::dtype, "'<i4' is not supported"},
      {"big endian", npy("{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }", four), ErrorCode::dtype, "'>f4'"},
      {"fortran", npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", four), ErrorCode::shape, "Fortran-order"},
      {"3-d", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 2), }", four), ErrorCode::shape, "3 dimensions"},
      {"scalar", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", four), ErrorCode::shape, "0 dimensions"},
      {"empty", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }", {}), ErrorCode::shape, "empty"},
      {"short data", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", four), ErrorCode::truncated, "16 data bytes"},
      {"extra data", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", four), ErrorCode::truncated, "do not match"},
      {"huge shape", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (18446744073709551615, 4), }", four), ErrorCode::truncated, "do not match"},
      {"unknown key", npy("{'descr': '<f4', 'order': 'C', 'shape': (4,), }", four), ErrorCode::header_json, "unknown key 'order'"},
      {"missing key", npy("{'descr': '<f4', 'shape': (4,), }", four), ErrorCode::header_json, "needs the keys"},
      {"garbage", npy("{'descr': '<f4', 'fortran_order': Nope, 'shape': (4,), }", four), ErrorCode::header_json, "expected True or False"},
      {"unterminated", npy("{'descr: <f4", four), ErrorCode::header_json, "unterminated string"},
  };
  for (const auto& c : cases) {
    try {
      parse_npy(c.bytes, "in.npy");
      ADD_FAILURE() << c.name << " parsed";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), c.code) << c.name << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(c.needle), std::string::npos) << c.name << ": " << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("in.npy", 0), 0u) << e.what();
    }
  }
}

TEST(ArrayIo, TextParsesSamplesPerLine) {
  const Matrix m = parse_text("# x y z\n1 2 3\n\n4,5,6  # comment\n 7\t8 , 9\r\n", "t");
  EXPECT_EQ(m.rows, 3u);
  EXPECT_EQ(m.cols, 3u);
  EXPECT_EQ(m.values, (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(parse_text(format_text(m), "again").values, m.values);
}

// What people write: a leading '+', underflow (float32 subnormals or 0), a UTF-8 byte order mark.
TEST(ArrayIo, TextTakesPlusSignsUnderflowAndAByteOrderMark) {
  const Matrix m = parse_text("\xEF\xBB\xBF+1 -2.5e+0 1e-50\n+0.5 1e-40 -1e-45\n", "t");
  ASSERT_EQ(m.rows, 2u);
  ASSERT_EQ(m.cols, 3u);
  EXPECT_EQ(m.values, (std::vector<float>{1.0f, -2.5f, 0.0f, 0.5f, static_cast<float>(1e-40), -0x1p-149f}));
  EXPECT_NE(m.values[4], 0.0f) << "a float32 subnormal";
  for (const char* bad : {"+-1\n", "++1\n", "+\n", "1e39\n", "-4e38\n", "1e400\n", "\xEF\xBB 1\n"}) {
    try {
      parse_text(bad, "t");
      FAIL() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("is not a number within float32's range"), std::string::npos) << e.what();
    }
  }
}

TEST(ArrayIo, TextErrorsNameTheLine) {
  try {
    parse_text("1 2\n3 x\n", "t");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "t: line 2: 'x' is not a number within float32's range");
  }
  try {
    parse_text("1 2\n3\n", "t");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::shape);
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos);
  }
  EXPECT_THROW(parse_text("# nothing\n\n", "t"), Error);
}

// Found by fuzz_arrays: "-3.4028234e38" read as -FLT_MAX, which format_text writes as "-3.40282347e+38",
// which the reader then refused as beyond float32's range (the check compared the decimal with FLT_MAX
// instead of asking whether it rounds to a finite float). And "1e400", beyond even double's range, was
// read as infinity where "1e39" was an error.
TEST(ArrayIo, TextReadsBackWhatItWritesAtFloat32sLimits) {
  const float max = std::numeric_limits<float>::max();
  const Matrix m = parse_text("nan -3.4028234e38 3.40282347e+38 3.4028235677e38 1e-400 -0\n", "t");
  ASSERT_EQ(m.cols, 6u);
  EXPECT_TRUE(std::isnan(m.values[0]));
  EXPECT_EQ(m.values[1], -max);
  EXPECT_EQ(m.values[2], max);
  EXPECT_EQ(m.values[3], max);  // just below FLT_MAX + half an ulp: rounds down
  EXPECT_EQ(m.values[4], 0.0f);
  EXPECT_TRUE(std::signbit(m.values[5]));
  const Matrix back = parse_text(format_text(m), "again");
  ASSERT_EQ(back.values.size(), m.values.size());
  EXPECT_TRUE(std::isnan(back.values[0]));
  for (std::size_t i = 1; i < m.values.size(); ++i) EXPECT_EQ(std::memcmp(&back.values[i], &m.values[i], 4), 0) << i;
  // Rounds to infinity in float32, or is beyond double's range: an error, like 1e39.
  for (const char* beyond : {"3.4028235678e38", "-3.4028236e38", "1e39", "1e400", "-1e400", "+1e99999"}) {
    try {
      parse_text(std::string("1 ") + beyond + "\n", "t");
      FAIL() << beyond << " was read";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("is not a number within float32's range"), std::string::npos) << e.what();
    }
  }
}

TEST(ArrayIo, ReadMatrixRecognisesNpyAndText) {
  test::TempDir dir;
  write_npy(dir / "a.npy", Matrix{1, 2, {1.0f, 2.0f}});
  EXPECT_EQ(read_matrix(dir / "a.npy").values, (std::vector<float>{1.0f, 2.0f}));
  std::ofstream(dir / "a.txt") << "3 4\n";
  EXPECT_EQ(read_matrix(dir / "a.txt").values, (std::vector<float>{3.0f, 4.0f}));
}

}  // namespace
}  // namespace mlpcore
