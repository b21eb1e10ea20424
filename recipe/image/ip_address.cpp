// IpAddress parsing uses inet_pton (strict numeric forms only: no hostnames, no octal or
// shortened IPv4 like "127.1", which would otherwise be a way to smuggle loopback past a
// text-based check).
#include "recipe/image/ip_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

namespace di::recipe::image {

IpAddress IpAddress::v4_of(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  IpAddress ip;
  ip.bytes[0] = a;
  ip.bytes[1] = b;
  ip.bytes[2] = c;
  ip.bytes[3] = d;
  return ip;
}

std::optional<IpAddress> IpAddress::parse(std::string_view text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  if (text.empty() || text.size() > 63) return {};
  char buf[64];
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  IpAddress ip;
  if (inet_pton(AF_INET, buf, ip.bytes.data()) == 1) return ip;
  if (inet_pton(AF_INET6, buf, ip.bytes.data()) == 1) {
    ip.v6 = true;
    return ip;
  }
  return {};
}

std::optional<IpAddress> IpAddress::from_sockaddr(const sockaddr* sa, uint16_t* port) {
  if (sa == nullptr) return {};
  IpAddress ip;
  if (sa->sa_family == AF_INET) {
    sockaddr_in in;
    std::memcpy(&in, sa, sizeof(in));
    std::memcpy(ip.bytes.data(), &in.sin_addr, 4);
    if (port) *port = ntohs(in.sin_port);
    return ip;
  }
  if (sa->sa_family == AF_INET6) {
    sockaddr_in6 in6;
    std::memcpy(&in6, sa, sizeof(in6));
    std::memcpy(ip.bytes.data(), &in6.sin6_addr, 16);
    ip.v6 = true;
    if (port) *port = ntohs(in6.sin6_port);
    return ip;
  }
  return {};
}

std::optional<IpAddress> IpAddress::embedded_v4() const {
  if (!v6) return {};
  const auto& b = bytes;
  auto zeros = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      if (b[i] != 0) return false;
    }
    return true;
  };
  if (zeros(0, 10) && b[10] == 0xff && b[11] == 0xff) {  // ::ffff:0:0/96
    return v4_of(b[12], b[13], b[14], b[15]);
  }
  if (zeros(0, 12) && !(zeros(12, 15) && b[15] <= 1)) {  // ::/96 except :: and ::1
    return v4_of(b[12], b[13], b[14], b[15]);
  }
  if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && zeros(4, 12)) {
    return v4_of(b[12], b[13], b[14], b[15]);  // 64:ff9b::/96 (NAT64)
  }
  if (b[0] == 0x20 && b[1] == 0x02) return v4_of(b[2], b[3], b[4], b[5]);  // 2002::/16
  return {};
}

std::string IpAddress::to_string() const {
  char buf[INET6_ADDRSTRLEN] = {0};
  inet_ntop(v6 ? AF_INET6 : AF_INET, bytes.data(), buf, sizeof(buf));
  return buf;
}

std::optional<Cidr> Cidr::parse(std::string_view text) {
  const size_t slash = text.find('/');
  auto ip = IpAddress::parse(text.substr(0, slash));
  if (!ip) return {};
  const int max_bits = ip->v6 ? 128 : 32;
  int prefix = max_bits;
  if (slash != std::string_view::npos) {
    const std::string_view digits = text.substr(slash + 1);
    if (digits.empty() || digits.size() > 3) return {};
    prefix = 0;
    for (const char c : digits) {
      if (c < '0' || c > '9') return {};
      prefix = prefix * 10 + (c - '0');
    }
    if (prefix > max_bits) return {};
  }
  return Cidr{*ip, prefix};
}

bool Cidr::contains(const IpAddress& ip) const {
  if (ip.v6 != base.v6) return false;
  int bits = prefix;
  for (int i = 0; bits > 0; ++i, bits -= 8) {
    const uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
    if ((ip.bytes[i] & mask) != (base.bytes[i] & mask)) return false;
  }
  return true;
}

}  // namespace di::recipe::image
