#include "realcluster/control_plane.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "slicewright/base/status.h"

#include "client/process.h"

extern char** environ;  // NOLINT(readability-redundant-declaration): posix_spawn's environment

namespace slicewright::test_support {
namespace {

constexpr int kSkipExitCode = 77;

std::vector<std::string> SplitOnSpaces(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// Reads one line from `fd` within `timeout`; what came before the deadline or EOF otherwise.
std::string ReadLine(int fd, std::chrono::seconds timeout) {
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (line.empty() || line.back() != '\n') {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd readable{fd, POLLIN, 0};
    if (::poll(&readable, 1, static_cast<int>(left.count())) <= 0) continue;
    char c = 0;
    if (::read(fd, &c, 1) != 1) break;
    line.push_back(c);
  }
  return line;
}

}  // namespace

Result<std::unique_ptr<RealControlPlane>> RealControlPlane::Start(const Options& options) {
  const char* assets = std::getenv("KUBEBUILDER_ASSETS");
  if (assets == nullptr || *assets == '\0') {
    return Status(StatusCode::kNotFound,
                  "KUBEBUILDER_ASSETS is not set: the real-cluster tier is skipped (export "
                  "KUBEBUILDER_ASSETS=$(../shared/envtest/unpack.sh) to run it)");
  }
  std::unique_ptr<RealControlPlane> plane(new RealControlPlane());
  std::string pattern = (std::filesystem::temp_directory_path() / "sw-realcluster-cc.XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) return Status(StatusCode::kInternal, "mkdtemp failed");
  plane->work_dir_ = pattern;

  int to_child[2];
  int from_child[2];
  if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0) {
    return Status(StatusCode::kInternal, "pipe failed");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
  posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
  const std::string script = std::string(SW_SOURCE_DIR) + "/tests/realcluster/control_plane.py";
  std::vector<std::string> argv = {"/usr/bin/python3", script, "up", "--dir", plane->work_dir_};
  if (options.dual_stack) argv.emplace_back("--dual-stack");
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (std::string& arg : argv) args.push_back(arg.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(to_child[0]);
  ::close(from_child[1]);
  if (spawned != 0) {
    ::close(to_child[1]);
    ::close(from_child[0]);
    return Status(StatusCode::kInternal, "cannot run " + script);
  }
  plane->child_pid_ = pid;
  plane->child_stdin_ = to_child[1];

  const std::string line = ReadLine(from_child[0], std::chrono::seconds(120));
  ::close(from_child[0]);
  nlohmann::json described = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (described.is_discarded() || !described.contains("kubeconfig")) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid && WIFEXITED(status) &&
        WEXITSTATUS(status) == kSkipExitCode) {
      plane->child_pid_ = -1;
      return Status(StatusCode::kNotFound, line);
    }
    return Status(StatusCode::kUnavailable, "the control plane did not come up: " + line);
  }
  plane->admin_kubeconfig_ = described["kubeconfig"].get<std::string>();
  plane->server_ = described["server"].get<std::string>();
  plane->ca_file_ = described["ca"].get<std::string>();
  plane->version_ = described["version"].get<std::string>();
  return plane;
}

RealControlPlane::~RealControlPlane() {
  if (child_stdin_ >= 0) ::close(child_stdin_);
  if (child_pid_ > 0) {
    int status = 0;
    ::waitpid(child_pid_, &status, 0);
  }
}

int RealControlPlane::minor() const {
  // "v1.34.2" -> 34
  const std::size_t dot = version_.find('.');
  return dot == std::string::npos ? 0 : std::atoi(version_.c_str() + dot + 1);
}

Result<std::string> RealControlPlane::Kubectl(const std::string& args,
                                              const std::string& input) const {
  std::vector<std::string> argv = {std::string(std::getenv("KUBEBUILDER_ASSETS")) + "/kubectl",
                                   "--kubeconfig", admin_kubeconfig_};
  for (std::string& word : SplitOnSpaces(args)) argv.push_back(std::move(word));
  if (!input.empty()) {
    const std::string file = work_dir_ + "/kubectl-input.json";
    std::ofstream(file, std::ios::trunc) << input;
    argv.emplace_back("-f");
    argv.push_back(file);
  }
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) env.emplace_back(*entry);
  Result<client::internal::ProcessResult> ran =
      client::internal::RunProcess(argv, env, std::chrono::seconds(60));
  if (!ran.ok()) return ran.status();
  if (ran->exit_code != 0) {
    return Status(StatusCode::kInternal, "kubectl " + args + ": " + ran->err);
  }
  return ran->out;
}

Result<std::string> RealControlPlane::ServiceAccountKubeconfig(const std::string& namespace_,
                                                               const std::string& name) const {
  // Created unless it exists; an AlreadyExists answer is fine.
  (void)Kubectl("-n " + namespace_ + " create serviceaccount " + name);
  Result<std::string> token = Kubectl("-n " + namespace_ + " create token " + name);
  if (!token.ok()) return token.status();
  std::string value = *token;
  while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) value.pop_back();
  nlohmann::json admin;
  {
    std::ifstream in(admin_kubeconfig_);
    admin = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  }
  if (admin.is_discarded()) return Status(StatusCode::kInternal, "admin kubeconfig unreadable");
  admin["users"] = nlohmann::json::array({{{"name", "user"}, {"user", {{"token", value}}}}});
  const std::string path = work_dir_ + "/sa-" + namespace_ + "-" + name + ".kubeconfig";
  std::ofstream(path, std::ios::trunc) << admin.dump(1);
  return path;
}

}  // namespace slicewright::test_support
