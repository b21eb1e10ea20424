// IpAddress and Cidr: numeric IPv4/IPv6 addresses and prefixes, parsed from text or taken from
// a socket address. Pure values; which addresses are allowed is DestinationPolicy's business.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

struct sockaddr;

namespace di::recipe::image {

struct IpAddress {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};  // IPv4 uses bytes[0..3]

  static IpAddress v4_of(uint8_t a, uint8_t b, uint8_t c, uint8_t d);
  // Dotted IPv4 or RFC 4291 IPv6 text (with '::' and an optional trailing dotted quad).
  static std::optional<IpAddress> parse(std::string_view text);
  // From a sockaddr_in / sockaddr_in6 (the address libcurl is about to connect to); the port
  // goes to *port when non-null.
  static std::optional<IpAddress> from_sockaddr(const sockaddr* sa, uint16_t* port);

  // The IPv4 address an IPv6 one carries (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d,
  // NAT64 64:ff9b::/96, 6to4 2002::/16), so that a filter cannot be bypassed by spelling an
  // internal IPv4 address as IPv6.
  std::optional<IpAddress> embedded_v4() const;

  std::string to_string() const;
  bool operator==(const IpAddress&) const = default;
};

struct Cidr {
  IpAddress base;
  int prefix = 0;  // bits

  // "10.0.0.0/8", "fc00::/7", or a bare address (a /32 or /128).
  static std::optional<Cidr> parse(std::string_view text);
  bool contains(const IpAddress& ip) const;
};

}  // namespace di::recipe::image
