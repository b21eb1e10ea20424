// DestinationPolicy: which resolved addresses an image fetch may connect to. The default denies
// loopback, private, link-local, multicast, cloud-metadata and other special-purpose addresses
// (SSRF); operators and tests can allow specific addresses or ports. Checks addresses only;
// the fetcher calls it for every connection, after DNS resolution and on every redirect hop.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "recipe/image/ip_address.h"

namespace di::recipe::image {

enum class AddressClass {
  kPublic,
  kUnspecified,    // 0.0.0.0/8, ::
  kLoopback,       // 127.0.0.0/8, ::1
  kPrivate,        // RFC 1918, 100.64.0.0/10 (CGNAT), fc00::/7, fec0::/10, 64:ff9b:1::/48
  kLinkLocal,      // 169.254.0.0/16, fe80::/10
  kMulticast,      // 224.0.0.0/4, ff00::/8
  kCloudMetadata,  // 169.254.169.254, 169.254.170.2, 100.100.100.200, 168.63.129.16,
                   // 192.0.0.192, fd00:ec2::254
  kReserved,       // documentation, benchmarking, 240.0.0.0/4, broadcast, discard-only, ...
};

// The class of `ip` per the IANA special-purpose registries; IPv6 forms that carry an IPv4
// address are classified by that IPv4 address.
AddressClass classify_address(const IpAddress& ip);
std::string_view address_class_name(AddressClass c);

// An address range and optionally one port (0 = any port).
struct DestinationRule {
  Cidr cidr;
  uint16_t port = 0;
};

// "10.0.0.0/8", "127.0.0.1:8080", "[::1]:8080", "fd00::/8" (a port only on a bare address).
Result<DestinationRule> parse_destination_rule(std::string_view text);

class DestinationPolicy {
 public:
  // The default: every non-public address class is denied.
  static DestinationPolicy deny_internal() { return DestinationPolicy(true); }
  // No class is denied (a fetch may reach any address); deny rules still apply.
  static DestinationPolicy allow_all() { return DestinationPolicy(false); }

  // Exceptions to the class denial (e.g. an internal image store). Deny rules win over them.
  DestinationPolicy& allow(DestinationRule rule) {
    allow_.push_back(rule);
    return *this;
  }
  // Addresses to refuse whatever their class.
  DestinationPolicy& deny(DestinationRule rule) {
    deny_.push_back(rule);
    return *this;
  }

  // OK when a connection to ip:port is permitted; otherwise kPermission naming the address,
  // its class and the rule that refused it.
  Status check(const IpAddress& ip, uint16_t port) const;

 private:
  explicit DestinationPolicy(bool deny_internal) : deny_internal_(deny_internal) {}

  bool deny_internal_;
  std::vector<DestinationRule> allow_;
  std::vector<DestinationRule> deny_;
};

}  // namespace di::recipe::image
