// libmlpcore_c.so shows a process its C interface and nothing else (engine/src/mlpcore_c.map). A C++ symbol
// it exported would also be one the dynamic linker could bind to another library's copy: a build by GCC 13
// crashed in std::regex's compiler while loading a model inside a process that had imported PyTorch, whose
// libraries export their own instances of the same standard templates.
#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

template <class T>
T read_at(const std::vector<char>& bytes, std::size_t offset) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) throw std::runtime_error("truncated ELF file");
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

// The names of the global and weak symbols `path` defines in its dynamic symbol table.
std::vector<std::string> dynamic_definitions(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  const std::vector<char> bytes{std::istreambuf_iterator<char>(file), {}};
  const auto header = read_at<Elf64_Ehdr>(bytes, 0);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64) throw std::runtime_error(path + ": not ELF64");
  const auto section = [&](std::size_t i) { return read_at<Elf64_Shdr>(bytes, header.e_shoff + i * sizeof(Elf64_Shdr)); };
  std::vector<std::string> names;
  for (std::size_t i = 0; i < header.e_shnum; ++i) {
    const Elf64_Shdr symbols = section(i);
    if (symbols.sh_type != SHT_DYNSYM) continue;
    const Elf64_Shdr strings = section(symbols.sh_link);
    if (strings.sh_offset > bytes.size() || bytes.size() - strings.sh_offset < strings.sh_size) throw std::runtime_error("truncated ELF file");
    for (std::size_t s = 1; s < symbols.sh_size / sizeof(Elf64_Sym); ++s) {
      const auto sym = read_at<Elf64_Sym>(bytes, symbols.sh_offset + s * sizeof(Elf64_Sym));
      if (sym.st_shndx == SHN_UNDEF || ELF64_ST_BIND(sym.st_info) == STB_LOCAL || sym.st_name >= strings.sh_size) continue;
      const char* name = bytes.data() + strings.sh_offset + sym.st_name;
      names.emplace_back(name, strnlen(name, strings.sh_size - sym.st_name));
    }
  }
  return names;
}

TEST(CLibrary, DefinesOnlyItsCInterfaceForOtherModules) {
  const std::vector<std::string> names = dynamic_definitions(MLPCORE_C_LIBRARY);
  bool create = false;
  for (const std::string& name : names) {
    EXPECT_EQ(name.rfind("mlpcore_", 0), 0u) << name << " is visible to the process that loads " << MLPCORE_C_LIBRARY;
    create = create || name == "mlpcore_network_create";
  }
  EXPECT_TRUE(create) << "mlpcore_network_create is not among its " << names.size() << " dynamic symbols";
}

}  // namespace
