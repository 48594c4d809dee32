#pragma once
// Reads tests/data/amd_matrix_layouts.csv (AMD's Matrix Instruction Calculator, copied from
// shared/reference): which matrix element every lane holds in every register of every instruction.
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace mlpcore::test {

struct LayoutRow {
  std::string arch, instruction;
  unsigned wave = 0;
  char matrix = 0;  // 'A', 'B', 'C' or 'D'
  unsigned lane = 0, reg = 0, half = 0;
  int row = 0, col = 0;
};

inline const std::vector<LayoutRow>& reference_layouts() {
  static const std::vector<LayoutRow> rows = [] {
    std::ifstream in(std::string(MLPCORE_SOURCE_DIR) + "/tests/data/amd_matrix_layouts.csv");
    if (!in) throw std::runtime_error("cannot open tests/data/amd_matrix_layouts.csv");
    std::vector<LayoutRow> out;
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::vector<std::string> f;
      std::stringstream ss(line);
      for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
      if (f.size() != 10) throw std::runtime_error("bad layout row: " + line);
      LayoutRow r;
      r.arch = f[0];
      r.instruction = f[1];
      r.wave = static_cast<unsigned>(std::stoul(f[2]));
      r.matrix = f[3][0];
      r.lane = static_cast<unsigned>(std::stoul(f[5]));
      r.reg = static_cast<unsigned>(std::stoul(f[6].substr(1)));
      r.half = f[7] == "31:16" ? 1 : 0;
      r.row = std::stoi(f[8]);
      r.col = std::stoi(f[9]);
      out.push_back(r);
    }
    return out;
  }();
  return rows;
}

// The rows of one instruction and matrix, keyed by (lane, reg, half).
inline std::map<std::tuple<unsigned, unsigned, unsigned>, std::pair<int, int>> reference_layout(const std::string& arch,
                                                                                                   const std::string& instruction,
                                                                                                   unsigned wave, char matrix) {
  std::map<std::tuple<unsigned, unsigned, unsigned>, std::pair<int, int>> out;
  for (const auto& r : reference_layouts())
    if (r.arch == arch && r.instruction == instruction && r.wave == wave && r.matrix == matrix)
      out[{r.lane, r.reg, r.half}] = {r.row, r.col};
  return out;
}

}  // namespace mlpcore::test
