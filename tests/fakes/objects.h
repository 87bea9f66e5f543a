// Objects the tests and benchmarks against a running API server create again and again, built
// in memory: plain values, no I/O.
#pragma once

#include <string>
#include <utility>

#include "slicewright/model/core.h"

namespace slicewright::test_support {

// A Service `name` selecting app=`name`, with one port "http": 80 to the pods' 8080.
inline model::Service HttpService(std::string name, std::string namespace_ = "default") {
  model::Service service;
  service.spec.selector = model::StringMap{{"app", name}};
  service.metadata.name = std::move(name);
  service.metadata.namespace_ = std::move(namespace_);
  model::ServicePort& port = service.spec.ports.emplace_back();
  port.name = "http";
  port.port = 80;
  port.target_port = model::IntOrString::FromInt(8080);
  return service;
}

}  // namespace slicewright::test_support
