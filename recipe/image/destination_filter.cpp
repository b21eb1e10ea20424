// Address classification and the destination policy. Metadata endpoints are checked before
// the broad ranges that contain them so errors say what was actually targeted.
#include "recipe/image/destination_filter.h"

namespace di::recipe::image {
namespace {

struct Range {
  const char* cidr;
  AddressClass cls;
};

// Ordered: the first match wins.
constexpr Range kRanges[] = {
    {"169.254.169.254/32", AddressClass::kCloudMetadata},  // AWS, GCP, Azure, OpenStack, ...
    {"169.254.170.2/32", AddressClass::kCloudMetadata},    // AWS ECS task metadata
    {"100.100.100.200/32", AddressClass::kCloudMetadata},  // Alibaba Cloud
    {"168.63.129.16/32", AddressClass::kCloudMetadata},    // Azure WireServer
    {"192.0.0.192/32", AddressClass::kCloudMetadata},      // Oracle Cloud
    {"fd00:ec2::254/128", AddressClass::kCloudMetadata},   // AWS IPv6 IMDS
    {"0.0.0.0/8", AddressClass::kUnspecified},
    {"10.0.0.0/8", AddressClass::kPrivate},
    {"100.64.0.0/10", AddressClass::kPrivate},
    {"127.0.0.0/8", AddressClass::kLoopback},
    {"169.254.0.0/16", AddressClass::kLinkLocal},
    {"172.16.0.0/12", AddressClass::kPrivate},
    {"192.0.0.0/24", AddressClass::kReserved},
    {"192.0.2.0/24", AddressClass::kReserved},
    {"192.88.99.0/24", AddressClass::kReserved},
    {"192.168.0.0/16", AddressClass::kPrivate},
    {"198.18.0.0/15", AddressClass::kReserved},
    {"198.51.100.0/24", AddressClass::kReserved},
    {"203.0.113.0/24", AddressClass::kReserved},
    {"224.0.0.0/4", AddressClass::kMulticast},
    {"240.0.0.0/4", AddressClass::kReserved},  // includes 255.255.255.255
    {"::/128", AddressClass::kUnspecified},
    {"::1/128", AddressClass::kLoopback},
    {"64:ff9b:1::/48", AddressClass::kPrivate},
    {"100::/64", AddressClass::kReserved},
    {"2001:db8::/32", AddressClass::kReserved},
    {"fc00::/7", AddressClass::kPrivate},
    {"fe80::/10", AddressClass::kLinkLocal},
    {"fec0::/10", AddressClass::kPrivate},
    {"ff00::/8", AddressClass::kMulticast},
};

const std::vector<Cidr>& parsed_ranges() {
  static const std::vector<Cidr> ranges = [] {
    std::vector<Cidr> out;
    for (const Range& r : kRanges) out.push_back(*Cidr::parse(r.cidr));
    return out;
  }();
  return ranges;
}

bool matches(const DestinationRule& rule, const IpAddress& ip, uint16_t port) {
  if (rule.port != 0 && rule.port != port) return false;
  if (rule.cidr.contains(ip)) return true;
  // A rule written for IPv4 also covers the IPv6 spellings of that address.
  const auto v4 = ip.embedded_v4();
  return v4 && rule.cidr.contains(*v4);
}

std::string where(const IpAddress& ip, uint16_t port) {
  return (ip.v6 ? "[" + ip.to_string() + "]" : ip.to_string()) + ":" + std::to_string(port);
}

}  // namespace

AddressClass classify_address(const IpAddress& ip) {
  const auto& ranges = parsed_ranges();
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i].contains(ip)) return kRanges[i].cls;
  }
  if (const auto v4 = ip.embedded_v4()) return classify_address(*v4);
  return AddressClass::kPublic;
}

std::string_view address_class_name(AddressClass c) {
  switch (c) {
    case AddressClass::kPublic: return "public";
    case AddressClass::kUnspecified: return "unspecified";
    case AddressClass::kLoopback: return "loopback";
    case AddressClass::kPrivate: return "private";
    case AddressClass::kLinkLocal: return "link-local";
    case AddressClass::kMulticast: return "multicast";
    case AddressClass::kCloudMetadata: return "cloud metadata";
    case AddressClass::kReserved: return "reserved";
  }
  return "unknown";
}

Result<DestinationRule> parse_destination_rule(std::string_view text) {
  const std::string where_text = "destination rule '" + std::string(text) + "'";
  std::string_view addr = text;
  std::string_view port;
  bool has_port = false;
  if (!text.empty() && text.front() == '[') {  // [v6]:port
    const size_t close = text.find(']');
    if (close == std::string_view::npos) {
      return Status::invalid_argument(where_text + ": missing ']'");
    }
    addr = text.substr(1, close - 1);
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':') {
        return Status::invalid_argument(where_text + ": expected ':' after ']'");
      }
      has_port = true;
      port = text.substr(close + 2);
    }
  } else if (const size_t colon = text.find(':');
             colon != std::string_view::npos && colon == text.rfind(':')) {
    has_port = true;  // v4:port (an IPv6 address has several ':')
    addr = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  auto cidr = Cidr::parse(addr);
  if (!cidr) {
    return Status::invalid_argument(where_text + ": expected an IP address or CIDR prefix");
  }
  DestinationRule rule{*cidr, 0};
  if (has_port) {
    uint32_t p = 0;
    bool ok = !port.empty() && port.size() <= 5;
    for (const char c : port) {
      ok = ok && c >= '0' && c <= '9';
      if (ok) p = p * 10 + static_cast<uint32_t>(c - '0');
    }
    if (!ok || p == 0 || p > 65535) {
      return Status::invalid_argument(where_text + ": port must be 1-65535");
    }
    rule.port = static_cast<uint16_t>(p);
  }
  return rule;
}

Status DestinationPolicy::check(const IpAddress& ip, uint16_t port) const {
  for (const DestinationRule& r : deny_) {
    if (matches(r, ip, port)) {
      return Status::permission("destination " + where(ip, port) + " is denied by policy");
    }
  }
  for (const DestinationRule& r : allow_) {
    if (matches(r, ip, port)) return Status::ok();
  }
  const AddressClass cls = classify_address(ip);
  if (deny_internal_ && cls != AddressClass::kPublic) {
    return Status::permission("destination " + where(ip, port) + " is a " +
                              std::string(address_class_name(cls)) +
                              " address; image fetches may only reach public addresses");
  }
  return Status::ok();
}

}  // namespace di::recipe::image
