// The real-cluster fixture for C++ tests: runs tests/realcluster/control_plane.py `up` (etcd,
// upstream kube-apiserver and kube-controller-manager's base controllers, from KUBEBUILDER_ASSETS)
// as a child process and reads where it serves. The child stops everything when its standard
// input closes, so even a test binary that crashes leaves no server behind. One per test binary.
#pragma once

#include <memory>
#include <string>

#include "slicewright/base/result.h"

namespace slicewright::test_support {

class RealControlPlane final {
 public:
  struct Options {
    bool dual_stack = false;
  };
  // kNotFound (its message is the fixture's one line on how to enable the tier) when
  // KUBEBUILDER_ASSETS is unset; kUnavailable when the control plane did not come up.
  static Result<std::unique_ptr<RealControlPlane>> Start(const Options& options);
  RealControlPlane(const RealControlPlane&) = delete;
  RealControlPlane& operator=(const RealControlPlane&) = delete;
  // Closes the child's standard input and waits for it to stop everything.
  ~RealControlPlane();

  const std::string& admin_kubeconfig() const { return admin_kubeconfig_; }
  const std::string& server() const { return server_; }
  const std::string& version() const { return version_; }  // "v1.34.2"
  // The Kubernetes minor version (34 for v1.34.2).
  int minor() const;
  // Runs `kubectl ARGS` as the admin (arguments split on spaces; none may contain one); returns
  // its standard output, or kInternal with its standard error.
  Result<std::string> Kubectl(const std::string& args, const std::string& input = "") const;
  // A kubeconfig that authenticates as ServiceAccount namespace/name (created if missing), with
  // a token from the TokenRequest API.
  Result<std::string> ServiceAccountKubeconfig(const std::string& namespace_,
                                               const std::string& name) const;

 private:
  RealControlPlane() = default;

  int child_pid_ = -1;
  int child_stdin_ = -1;
  std::string work_dir_;
  std::string admin_kubeconfig_;
  std::string server_;
  std::string ca_file_;
  std::string version_;
};

}  // namespace slicewright::test_support
