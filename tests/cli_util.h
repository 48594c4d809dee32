#pragma once
// Runs a command line through the shell and captures its exit code and combined output.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

#include "tests/test_util.h"

namespace mlpcore::test {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

inline CommandResult run_command(const std::string& command) {
  TempDir dir;
  const auto log = dir / "output.txt";
  const int status = std::system((command + " > " + log.string() + " 2>&1").c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  r.output = ss.str();
  return r;
}

inline std::string cli(const std::string& args) { return std::string(MLPCORE_CLI) + " " + args; }
inline std::string sample_model(const std::string& name) { return std::string(MLPCORE_SOURCE_DIR) + "/models/" + name + ".safetensors"; }

}  // namespace mlpcore::test
