#include "slicewright/client/rest_client.h"

#include <algorithm>
#include <random>
#include <string>
#include <utility>

#include "slicewright/codec/json.h"

#include "client/json_util.h"

namespace slicewright::client {
namespace {

// RFC 3986 unreserved characters pass; everything else is %XX (as Go's url.QueryEscape, but with
// %20 for space, which every server decodes the same).
std::string QueryEscape(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') ||
        (byte >= '0' && byte <= '9') || byte == '-' || byte == '_' || byte == '.' || byte == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
  return out;
}

// Path segments are names Kubernetes already validated; escaping keeps a hostile one from
// changing the path.
std::string PathEscape(std::string_view segment) { return QueryEscape(segment); }

void AddParam(std::string& query, std::string_view name, std::string_view value) {
  query += query.empty() ? '?' : '&';
  query += name;
  query += '=';
  query += QueryEscape(value);
}

std::string_view PatchContentType(PatchType type) {
  switch (type) {
    case PatchType::kJsonPatch:
      return "application/json-patch+json";
    case PatchType::kMergePatch:
      return "application/merge-patch+json";
    case PatchType::kStrategicMergePatch:
      return "application/strategic-merge-patch+json";
    case PatchType::kApplyPatch:
      return "application/apply-patch+yaml";
  }
  return "application/merge-patch+json";
}

// The longest Retry-After honoured.
constexpr std::chrono::seconds kMaxRetryAfter{600};

bool Retryable5xx(int status) {
  return status == 500 || status == 502 || status == 503 || status == 504;
}

// Methods whose repetition cannot apply a change twice. A PUT carries the resourceVersion it
// read, so a repeated PUT fails with a conflict instead of writing twice.
bool Repeatable(std::string_view method) {
  return method == "GET" || method == "PUT" || method == "DELETE" || method == "HEAD";
}

}  // namespace

std::string ResourceRef::Path(std::string_view namespace_, std::string_view name,
                              std::string_view subresource) const {
  std::string path = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  if (namespaced && !namespace_.empty()) {
    path += "/namespaces/";
    path += PathEscape(namespace_);
  }
  path += '/';
  path += resource;
  if (!name.empty()) {
    path += '/';
    path += PathEscape(name);
    if (!subresource.empty()) {
      path += '/';
      path += subresource;
    }
  }
  return path;
}

ResourceRef PodsResource() { return {"", "v1", "pods", true}; }
ResourceRef ServicesResource() { return {"", "v1", "services", true}; }
ResourceRef NodesResource() { return {"", "v1", "nodes", false}; }
ResourceRef NamespacesResource() { return {"", "v1", "namespaces", false}; }
ResourceRef EndpointsResource() { return {"", "v1", "endpoints", true}; }
ResourceRef EndpointSlicesResource() { return {"discovery.k8s.io", "v1", "endpointslices", true}; }
ResourceRef EventsResource() { return {"", "v1", "events", true}; }
ResourceRef LeasesResource() { return {"coordination.k8s.io", "v1", "leases", true}; }

std::string ListOptions::Query(bool watch) const {
  std::string query;
  if (watch) AddParam(query, "watch", "true");
  if (!label_selector.empty()) AddParam(query, "labelSelector", label_selector);
  if (!field_selector.empty()) AddParam(query, "fieldSelector", field_selector);
  if (limit > 0) AddParam(query, "limit", std::to_string(limit));
  if (!continue_token.empty()) AddParam(query, "continue", continue_token);
  if (!resource_version.empty()) AddParam(query, "resourceVersion", resource_version);
  if (!resource_version_match.empty()) {
    AddParam(query, "resourceVersionMatch", resource_version_match);
  }
  if (watch) {
    if (allow_watch_bookmarks) AddParam(query, "allowWatchBookmarks", "true");
    if (send_initial_events) AddParam(query, "sendInitialEvents", "true");
    if (timeout_seconds > 0) AddParam(query, "timeoutSeconds", std::to_string(timeout_seconds));
  }
  return query;
}

Result<std::unique_ptr<RestClient>> RestClient::Create(std::shared_ptr<Transport> transport,
                                                       RestClientOptions options) {
  if (transport == nullptr) return InvalidError("RestClient: no transport");
  Clock& clock = options.clock != nullptr ? *options.clock : SystemClock::Get();
  Result<std::unique_ptr<TokenBucket>> throttle =
      TokenBucket::Create(clock, options.qps, options.burst);
  if (!throttle.ok()) {
    return InvalidError("--kube-api-qps/--kube-api-burst: " +
                        std::string(throttle.status().message()));
  }
  return std::unique_ptr<RestClient>(
      new RestClient(std::move(transport), std::move(options), std::move(throttle).value()));
}

RestClient::RestClient(std::shared_ptr<Transport> transport, RestClientOptions options,
                       std::unique_ptr<TokenBucket> throttle)
    : transport_(std::move(transport)),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : SystemClock::Get()),
      throttle_(std::move(throttle)) {}

std::optional<Clock::Duration> RestClient::RetryDelay(const Request& request,
                                                      const Result<Response>& result, int attempt) {
  if (attempt >= options_.max_retries) return std::nullopt;
  bool retry = false;
  std::optional<std::chrono::seconds> retry_after;
  if (!result.ok()) {
    // The request may or may not have reached the server: repeat only what is safe to repeat.
    retry = result.status().code() == StatusCode::kUnavailable && Repeatable(request.method);
  } else if (result->status == 429) {
    retry = true;  // the server refused the request without acting on it
    retry_after = result->retry_after;
  } else if (Retryable5xx(result->status)) {
    retry = Repeatable(request.method) || result->retry_after.has_value();
    retry_after = result->retry_after;
  }
  if (!retry) return std::nullopt;
  if (retry_after) {
    // A server (or a proxy) may ask for hours; client-go waits what it says, but a controller
    // that stops talking to its API server for that long has stopped working. Past the cap the
    // retry still comes, and a server still overloaded answers 429 again.
    return std::chrono::duration_cast<Clock::Duration>(
        std::min<std::chrono::seconds>(*retry_after, kMaxRetryAfter));
  }
  // Exponential with full jitter in [base/2, base] (wait.Backoff with Jitter), capped.
  auto base = options_.initial_backoff * (1LL << std::min(attempt, 20));
  base = std::min<std::chrono::milliseconds>(base, options_.max_backoff);
  thread_local std::minstd_rand random(std::random_device{}());
  std::uniform_real_distribution<double> jitter(0.5, 1.0);
  return std::chrono::duration_cast<Clock::Duration>(std::chrono::duration<double, std::milli>(
      static_cast<double>(base.count()) * jitter(random)));
}

void RestClient::CountRequest(std::string_view method, const Result<Response>& result) {
  std::string code = result.ok() ? std::to_string(result->status) : std::string("<error>");
  MutexLock lock(requests_mu_);
  ++requests_[{std::string(method), std::move(code)}];
}

std::vector<RequestCount> RestClient::RequestCounts() const {
  std::vector<RequestCount> out;
  MutexLock lock(requests_mu_);
  out.reserve(requests_.size());
  for (const auto& [key, count] : requests_) out.push_back({key.first, key.second, count});
  return out;
}

Result<ServerVersion> RestClient::GetServerVersion() {
  Request request;
  request.timeout = options_.request_timeout;
  request.target = "/version";
  SW_ASSIGN_OR_RETURN(std::string body, Send(request));
  SW_ASSIGN_OR_RETURN(nlohmann::json json, internal::ParseJson(body));
  ServerVersion version;
  std::string major;
  std::string minor;
  for (Status status :
       {internal::ReadString(json, "gitVersion", version.git_version),
        internal::ReadString(json, "major", major), internal::ReadString(json, "minor", minor)}) {
    if (!status.ok()) {
      status.WithContext("GET /version");
      return status;
    }
  }
  // Leading digits only: "34+" is 34.
  const auto number = [](const std::string& text) {
    int value = 0;
    for (const char c : text) {
      if (c < '0' || c > '9' || value > 100'000) break;
      value = value * 10 + (c - '0');
    }
    return value;
  };
  version.major = number(major);
  version.minor = number(minor);
  return version;
}

Result<std::string> RestClient::Send(const Request& request) {
  for (int attempt = 0;; ++attempt) {
    throttle_->Wait();
    Result<Response> result = transport_->Do(request);
    CountRequest(request.method, result);
    if (result.ok() && result->status >= 200 && result->status < 300) {
      return std::move(result->body);
    }
    if (std::optional<Clock::Duration> delay = RetryDelay(request, result, attempt)) {
      clock_.SleepUntil(clock_.Now() + *delay);
      continue;
    }
    if (!result.ok()) return result.status();
    return codec::DecodeStatusResponse(result->body, result->status);
  }
}

std::string RestClient::WriteQuery() const {
  std::string query;
  if (!options_.field_manager.empty()) AddParam(query, "fieldManager", options_.field_manager);
  return query;
}

Result<std::string> RestClient::Get(const ResourceRef& resource, std::string_view namespace_,
                                    std::string_view name) {
  Request request;
  request.timeout = options_.request_timeout;
  request.target = resource.Path(namespace_, name);
  return Send(request);
}

Result<std::string> RestClient::List(const ResourceRef& resource, std::string_view namespace_,
                                     const ListOptions& options) {
  Request request;
  request.target = resource.Path(namespace_) + options.Query(/*watch=*/false);
  request.timeout = options_.list_timeout;
  return Send(request);
}

Result<std::string> RestClient::Create(const ResourceRef& resource, std::string_view namespace_,
                                       std::string body) {
  Request request;
  request.timeout = options_.request_timeout;
  request.method = "POST";
  request.target = resource.Path(namespace_) + WriteQuery();
  request.body = std::move(body);
  request.content_type = "application/json";
  return Send(request);
}

Result<std::string> RestClient::Update(const ResourceRef& resource, std::string_view namespace_,
                                       std::string_view name, std::string body,
                                       std::string_view subresource) {
  Request request;
  request.timeout = options_.request_timeout;
  request.method = "PUT";
  request.target = resource.Path(namespace_, name, subresource) + WriteQuery();
  request.body = std::move(body);
  request.content_type = "application/json";
  return Send(request);
}

Result<std::string> RestClient::Patch(const ResourceRef& resource, std::string_view namespace_,
                                      std::string_view name, PatchType type, std::string body,
                                      std::string_view subresource) {
  Request request;
  request.timeout = options_.request_timeout;
  request.method = "PATCH";
  request.target = resource.Path(namespace_, name, subresource) + WriteQuery();
  request.body = std::move(body);
  request.content_type = std::string(PatchContentType(type));
  return Send(request);
}

Result<std::string> RestClient::Delete(const ResourceRef& resource, std::string_view namespace_,
                                       std::string_view name, const DeleteOptions& options) {
  Request request;
  request.timeout = options_.request_timeout;
  request.method = "DELETE";
  request.target = resource.Path(namespace_, name);
  std::string body = R"({"kind":"DeleteOptions","apiVersion":"v1")";
  if (!options.propagation_policy.empty()) {
    body += R"(,"propagationPolicy":")" + options.propagation_policy + "\"";
  }
  if (options.grace_period_seconds) {
    body += ",\"gracePeriodSeconds\":" + std::to_string(*options.grace_period_seconds);
  }
  if (!options.precondition_uid.empty() || !options.precondition_resource_version.empty()) {
    body += R"(,"preconditions":{)";
    bool first = true;
    // uids and resourceVersions are server-made tokens without quotes or backslashes.
    if (!options.precondition_uid.empty()) {
      body += R"("uid":")" + options.precondition_uid + "\"";
      first = false;
    }
    if (!options.precondition_resource_version.empty()) {
      body += first ? "" : ",";
      body += R"("resourceVersion":")" + options.precondition_resource_version + "\"";
    }
    body += '}';
  }
  body += '}';
  request.body = std::move(body);
  request.content_type = "application/json";
  return Send(request);
}

Status RestClient::Watch(const ResourceRef& resource, std::string_view namespace_,
                         const ListOptions& options,
                         const std::function<bool(std::string_view line)>& on_event,
                         StreamCanceller* canceller) {
  Request request;
  request.target = resource.Path(namespace_) + options.Query(/*watch=*/true);
  // A watch asked to end after timeoutSeconds that is still open well after that is dead (a
  // stalled proxy, a lost peer): a deadline a little past the server's ends it; without a server
  // timeout only cancellation does.
  request.timeout = std::chrono::milliseconds(0);
  if (options.timeout_seconds > 0) {
    const std::chrono::seconds server_timeout(options.timeout_seconds);
    const std::chrono::seconds grace = std::clamp<std::chrono::seconds>(
        server_timeout / 4, std::chrono::seconds(1), std::chrono::seconds(30));
    request.timeout = server_timeout + grace;
  }
  std::string partial;  // an event line split across reads
  bool stopped = false;
  Status overlong;  // set when a line outgrew options_.max_watch_line_bytes
  std::int64_t delivered = 0;
  const BodyConsumer consume = [&](std::string_view data) {
    while (!data.empty()) {
      const std::size_t newline = data.find('\n');
      if (newline == std::string_view::npos) {
        if (partial.size() + data.size() > options_.max_watch_line_bytes) {
          overlong = Status(StatusCode::kUnavailable,
                            "watch of " + resource.resource + ": an event line exceeded " +
                                std::to_string(options_.max_watch_line_bytes) +
                                " bytes without a newline");
          partial.clear();
          partial.shrink_to_fit();
          return false;
        }
        partial.append(data);
        return true;
      }
      std::string_view line = data.substr(0, newline);
      data.remove_prefix(newline + 1);
      if (!partial.empty()) {
        partial.append(line);
        line = partial;
      }
      if (!line.empty()) ++delivered;
      const bool more = line.empty() || on_event(line);
      partial.clear();
      if (!more) {
        stopped = true;
        return false;
      }
    }
    return true;
  };
  for (int attempt = 0;; ++attempt) {
    throttle_->Wait();
    partial.clear();
    Result<Response> result = transport_->Stream(request, consume, canceller);
    CountRequest(request.method, result);
    // Not retried: the same server would most likely send the same line again.
    if (!overlong.ok()) return overlong;
    if (result.ok() && result->status >= 200 && result->status < 300) return Status::Ok();
    if (stopped) return Status::Ok();
    // Once events arrived, reopening at the same resourceVersion would repeat them: the caller
    // resumes from the last one it saw instead.
    if (delivered > 0 && !result.ok()) return result.status();
    if (std::optional<Clock::Duration> delay = RetryDelay(request, result, attempt)) {
      clock_.SleepUntil(clock_.Now() + *delay);
      continue;
    }
    if (!result.ok()) return result.status();
    return codec::DecodeStatusResponse(result->body, result->status);
  }
}

}  // namespace slicewright::client
