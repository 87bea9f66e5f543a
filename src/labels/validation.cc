#include "slicewright/labels/validation.h"

#include <algorithm>

namespace slicewright::labels {
namespace {

// The regular expressions upstream validates with and quotes in its messages. We match them by
// hand (no std::regex: it is slow and throws), but the text must stay upstream's.
constexpr std::string_view kQualifiedNameFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr std::string_view kQualifiedNameErrMsg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";
constexpr std::string_view kLabelValueFmt = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
constexpr std::string_view kLabelValueErrMsg =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character";
constexpr std::string_view kDNS1123LabelFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
constexpr std::string_view kDNS1123LabelErrMsg =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character";
constexpr std::string_view kDNS1123SubdomainFmt =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
constexpr std::string_view kDNS1123SubdomainErrorMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character";

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// ^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$
bool MatchesQualifiedNamePart(std::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) {
    return false;
  }
  return std::ranges::all_of(s,
                             [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

// ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$
bool MatchesDNS1123Label(std::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) {
    return false;
  }
  return std::ranges::all_of(s, [](char c) { return IsLowerAlnum(c) || c == '-'; });
}

// DNS-1123 labels joined by single dots. The regex puts no length limit on each label.
bool MatchesDNS1123Subdomain(std::string_view s) {
  for (;;) {
    const std::size_t dot = s.find('.');
    if (!MatchesDNS1123Label(s.substr(0, dot))) {
      return false;
    }
    if (dot == std::string_view::npos) {
      return true;
    }
    s.remove_prefix(dot + 1);
  }
}

std::string Prefixed(std::string_view prefix, std::string message) {
  message.insert(0, prefix);
  return message;
}

}  // namespace

std::string MaxLenError(std::size_t length) {
  return "must be no more than " + std::to_string(length) + " characters";
}

std::string EmptyError() { return "must be non-empty"; }

std::string RegexError(std::string_view msg, std::string_view regex,
                       std::initializer_list<std::string_view> examples) {
  std::string out(msg);
  if (examples.size() == 0) {
    out += " (regex used for validation is '";
  } else {
    out += " (e.g. ";
    bool first = true;
    for (const std::string_view example : examples) {
      if (!first) {
        out += " or ";
      }
      first = false;
      out += '\'';
      out += example;
      out += "', ";
    }
    out += "regex used for validation is '";
  }
  out += regex;
  out += "')";
  return out;
}

std::vector<std::string> IsQualifiedName(std::string_view value) {
  std::vector<std::string> errs;
  std::string_view name = value;
  const std::size_t slash = value.find('/');
  if (slash != std::string_view::npos) {
    if (value.find('/', slash + 1) != std::string_view::npos) {
      // More than one '/': upstream stops at this single message.
      errs.push_back(
          "a qualified name " +
          RegexError(kQualifiedNameErrMsg, kQualifiedNameFmt, {"MyName", "my.name", "123-abc"}) +
          " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
      return errs;
    }
    const std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      errs.push_back(Prefixed("prefix part ", EmptyError()));
    } else {
      for (std::string& message : IsDNS1123Subdomain(prefix)) {
        errs.push_back(Prefixed("prefix part ", std::move(message)));
      }
    }
  }
  if (name.empty()) {
    errs.push_back(Prefixed("name part ", EmptyError()));
  } else if (name.size() > kQualifiedNameMaxLength) {
    errs.push_back(Prefixed("name part ", MaxLenError(kQualifiedNameMaxLength)));
  }
  if (!MatchesQualifiedNamePart(name)) {
    errs.push_back(Prefixed("name part ", RegexError(kQualifiedNameErrMsg, kQualifiedNameFmt,
                                                     {"MyName", "my.name", "123-abc"})));
  }
  return errs;
}

std::vector<std::string> IsValidLabelValue(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kLabelValueMaxLength) {
    errs.push_back(MaxLenError(kLabelValueMaxLength));
  }
  if (!value.empty() && !MatchesQualifiedNamePart(value)) {
    errs.push_back(RegexError(kLabelValueErrMsg, kLabelValueFmt, {"MyValue", "my_value", "12345"}));
  }
  return errs;
}

std::vector<std::string> IsDNS1123Label(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kDNS1123LabelMaxLength) {
    errs.push_back(MaxLenError(kDNS1123LabelMaxLength));
  }
  if (!MatchesDNS1123Label(value)) {
    if (MatchesDNS1123Subdomain(value)) {
      // A valid subdomain but not a label: the length was checked already, so it must be dots.
      errs.emplace_back("must not contain dots");
    } else {
      errs.push_back(RegexError(kDNS1123LabelErrMsg, kDNS1123LabelFmt, {"my-name", "123-abc"}));
    }
  }
  return errs;
}

std::vector<std::string> IsDNS1123Subdomain(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kDNS1123SubdomainMaxLength) {
    errs.push_back(MaxLenError(kDNS1123SubdomainMaxLength));
  }
  if (!MatchesDNS1123Subdomain(value)) {
    errs.push_back(RegexError(kDNS1123SubdomainErrorMsg, kDNS1123SubdomainFmt, {"example.com"}));
  }
  return errs;
}

std::vector<std::string> NameIsDNSSubdomain(std::string_view name, bool prefix) {
  if (prefix && name.size() > 1 && name.back() == '-') {
    // Upstream's maskTrailingDash: name[:len(name)-2] + "a". It drops the dash and the character
    // before it; kept on purpose so the same names pass and fail as in Kubernetes.
    std::string masked(name.substr(0, name.size() - 2));
    masked += 'a';
    return IsDNS1123Subdomain(masked);
  }
  return IsDNS1123Subdomain(name);
}

bool IsDNS1123SubdomainPrefixValid(std::string_view generate_name) {
  if (generate_name.size() <= 1 || generate_name.back() != '-') {
    return IsDNS1123SubdomainValid(generate_name);
  }
  // Decides NameIsDNSSubdomain(generate_name, true) without building kept + "a": every label of
  // `kept` before its last dot must be a DNS label, and the last (possibly empty) segment plus the
  // appended 'a' must be one too, which holds if it is empty or starts alphanumeric and has no
  // characters outside [-a-z0-9].
  const std::string_view kept = generate_name.substr(0, generate_name.size() - 2);
  if (kept.size() + 1 > kDNS1123SubdomainMaxLength) {
    return false;
  }
  const std::size_t dot = kept.rfind('.');
  std::string_view tail = kept;
  if (dot != std::string_view::npos) {
    if (!MatchesDNS1123Subdomain(kept.substr(0, dot))) {
      return false;
    }
    tail = kept.substr(dot + 1);
  }
  if (tail.empty()) {
    return true;
  }
  if (!IsLowerAlnum(tail.front())) {
    return false;
  }
  return std::ranges::all_of(tail, [](char c) { return IsLowerAlnum(c) || c == '-'; });
}

bool IsQualifiedNameValid(std::string_view value) {
  std::string_view name = value;
  const std::size_t slash = value.find('/');
  if (slash != std::string_view::npos) {
    if (value.find('/', slash + 1) != std::string_view::npos) {
      return false;
    }
    const std::string_view prefix = value.substr(0, slash);
    if (prefix.empty() || !IsDNS1123SubdomainValid(prefix)) {
      return false;
    }
    name = value.substr(slash + 1);
  }
  return name.size() <= kQualifiedNameMaxLength && MatchesQualifiedNamePart(name);
}

bool IsLabelValueValid(std::string_view value) {
  return value.size() <= kLabelValueMaxLength && (value.empty() || MatchesQualifiedNamePart(value));
}

bool IsDNS1123LabelValid(std::string_view value) {
  return value.size() <= kDNS1123LabelMaxLength && MatchesDNS1123Label(value);
}

bool IsDNS1123SubdomainValid(std::string_view value) {
  return value.size() <= kDNS1123SubdomainMaxLength && MatchesDNS1123Subdomain(value);
}

}  // namespace slicewright::labels
