#include "engine/src/kernel_file.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "engine/src/file_io.h"
#include "engine/src/specialized_source.h"
#include "mlpcore/error.h"

namespace mlpcore::detail {
namespace {

constexpr char kMagic[8] = {'M', 'L', 'P', 'C', 'K', 'E', 'R', 'N'};
constexpr std::uint32_t kMaxText = 4096;

template <class T>
void put(std::vector<std::byte>& out, T v) {
  std::array<std::byte, sizeof(T)> b;
  std::memcpy(b.data(), &v, sizeof v);
  out.insert(out.end(), b.begin(), b.end());
}

class Reader {
 public:
  Reader(std::span<const std::byte> bytes, const std::string& path) : bytes_(bytes), path_(path) {}

  template <class T>
  T get(const char* field) {
    need(sizeof(T), field);
    T v;
    std::memcpy(&v, bytes_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string text(const char* field) {
    const auto n = get<std::uint32_t>(field);
    if (n > kMaxText) fail(field, "is " + std::to_string(n) + " bytes long; at most " + std::to_string(kMaxText));
    need(n, field);
    std::string s(reinterpret_cast<const char*>(bytes_.data() + at_), n);
    at_ += n;
    return s;
  }
  std::span<const std::byte> rest() const { return bytes_.subspan(at_); }
  std::span<const std::byte> take(std::size_t n) {  // n <= rest().size()
    const std::span<const std::byte> s = bytes_.subspan(at_, n);
    at_ += n;
    return s;
  }
  [[noreturn]] void fail(const std::string& field, const std::string& problem) const { throw Error(ErrorCode::kernel_file, path_, field, problem); }

 private:
  void need(std::size_t n, const char* field) const {
    if (bytes_.size() - at_ < n) fail(field, "the file ends at byte " + std::to_string(bytes_.size()) + ", inside this field");
  }
  std::span<const std::byte> bytes_;
  const std::string& path_;
  std::size_t at_ = 0;
};

}  // namespace

static_assert(kMaxKernelModules == 2 * (kKernelSlots.size() + 2),
              "a file holds float32 and float16 I/O kernels of every slot, and the small-batch twins of the two layouts' kernels");

std::vector<std::byte> encode_kernel_file(const KernelFile& k) {
  if (k.modules.empty() || k.modules.size() > kMaxKernelModules)
    throw std::logic_error("a kernel file of " + std::to_string(k.modules.size()) + " modules; it holds 1 to " + std::to_string(kMaxKernelModules));
  std::vector<std::byte> out(reinterpret_cast<const std::byte*>(kMagic), reinterpret_cast<const std::byte*>(kMagic) + sizeof kMagic);
  put(out, kKernelFileVersion);
  for (const std::string* s : {&k.target, &k.source_key, &k.compiler, &k.network}) {
    put(out, static_cast<std::uint32_t>(s->size()));
    const auto* b = reinterpret_cast<const std::byte*>(s->data());
    out.insert(out.end(), b, b + s->size());
  }
  put(out, static_cast<std::uint32_t>(k.modules.size()));
  for (const std::vector<std::byte>& code : k.modules) {
    put(out, static_cast<std::uint64_t>(code.size()));
    put(out, fnv1a64(code.data(), code.size()));
    out.insert(out.end(), code.begin(), code.end());
  }
  return out;
}

KernelFile decode_kernel_file(std::span<const std::byte> bytes, const std::string& path) {
  Reader r(bytes, path);
  const auto magic = r.get<std::array<char, 8>>("magic");
  if (std::memcmp(magic.data(), kMagic, sizeof kMagic) != 0) r.fail("magic", "not an mlpcore kernel file (written by `mlpcore compile`)");
  if (const auto v = r.get<std::uint32_t>("version"); v != kKernelFileVersion)
    r.fail("version", "format version " + std::to_string(v) + "; this mlpcore reads version " + std::to_string(kKernelFileVersion));
  KernelFile k;
  k.target = r.text("target");
  k.source_key = r.text("source_key");
  k.compiler = r.text("compiler");
  k.network = r.text("network");
  const auto modules = r.get<std::uint32_t>("modules");
  if (modules == 0 || modules > kMaxKernelModules)
    r.fail("modules", std::to_string(modules) + "; a file holds 1 to " + std::to_string(kMaxKernelModules));
  for (std::uint32_t m = 0; m < modules; ++m) {
    const std::string field = "module " + std::to_string(m + 1) + " of " + std::to_string(modules) + ": ";
    const auto size = r.get<std::uint64_t>((field + "code_size").c_str());
    const auto checksum = r.get<std::uint64_t>((field + "code_checksum").c_str());
    if (size == 0) r.fail(field + "code_size", "no code");
    if (size > r.rest().size()) r.fail(field + "code_size", std::to_string(size) + " bytes announced, " + std::to_string(r.rest().size()) + " follow");
    const std::span<const std::byte> code = r.take(static_cast<std::size_t>(size));
    if (fnv1a64(code.data(), code.size()) != checksum) r.fail(field + "code_checksum", "the code does not match its checksum (corrupt file)");
    k.modules.emplace_back(code.begin(), code.end());
  }
  if (!r.rest().empty()) r.fail("modules", std::to_string(r.rest().size()) + " bytes follow the last module");
  return k;
}

KernelFile read_kernel_file(const std::filesystem::path& path) {
  const std::vector<std::byte> bytes = read_file(path, kMaxKernelFileBytes);
  return decode_kernel_file(bytes, path.string());
}

void check_kernel_file_matches(const KernelFile& k, const std::string& path, const std::string& source_key, const std::string& target,
                               const std::string& network) {
  if (k.target != target)
    throw Error(ErrorCode::kernel_file, path, "target", "compiled for " + k.target + "; this GPU is " + target + " (mlpcore compile --target " + target + ")");
  if (k.source_key != source_key)
    throw Error(ErrorCode::kernel_file, path, "source_key",
                "compiled for " + k.network + "; this network is " + network + ", or another version of mlpcore's kernels (compile it again)");
}

}  // namespace mlpcore::detail
