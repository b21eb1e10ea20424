// Address classification against the IANA IPv4/IPv6 special-purpose registries (RFC 6890 and
// successors), IPv6 spellings of IPv4 addresses, and the policy's allow/deny rules.
#include <gtest/gtest.h>

#include <initializer_list>

#include "recipe/image/destination_filter.h"

namespace di::recipe::image {
namespace {

AddressClass cls(const char* text) {
  auto ip = IpAddress::parse(text);
  EXPECT_TRUE(ip.has_value()) << text;
  return ip ? classify_address(*ip) : AddressClass::kReserved;
}

// Every one of `addresses` classifies as `expected`.
void expect_class(AddressClass expected, std::initializer_list<const char*> addresses) {
  for (const char* text : addresses) EXPECT_EQ(cls(text), expected) << text;
}

TEST(DestinationFilter, ClassifiesSpecialPurposeAddresses) {
  expect_class(AddressClass::kLoopback, {"127.0.0.1", "127.255.0.9", "::1"});
  expect_class(AddressClass::kPrivate, {"10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1",
                                        "100.64.0.1", "fd12:3456::1"});
  expect_class(AddressClass::kLinkLocal, {"169.254.1.1", "fe80::1"});
  expect_class(AddressClass::kMulticast, {"224.0.0.1", "239.255.255.250", "ff02::1"});
  expect_class(AddressClass::kCloudMetadata, {"169.254.169.254", "fd00:ec2::254", "100.100.100.200"});
  expect_class(AddressClass::kUnspecified, {"0.0.0.0", "::"});
  expect_class(AddressClass::kReserved, {"255.255.255.255", "192.0.2.10", "2001:db8::1"});
  // Ordinary public addresses, including neighbours of the private blocks.
  expect_class(AddressClass::kPublic, {"8.8.8.8", "172.32.0.1", "172.15.255.255", "100.128.0.1",
                                       "2606:4700:4700::1111"});
}

TEST(DestinationFilter, IPv6SpellingsOfInternalIPv4AreStillInternal) {
  expect_class(AddressClass::kLoopback, {"::ffff:127.0.0.1", "2002:7f00:1::"});  // and 6to4 of it
  expect_class(AddressClass::kCloudMetadata, {"::ffff:169.254.169.254", "::ffff:a9fe:a9fe"});
  expect_class(AddressClass::kPrivate, {"::10.0.0.1", "64:ff9b::192.168.0.1"});
  expect_class(AddressClass::kPublic, {"::ffff:8.8.8.8"});
}

TEST(DestinationFilter, ParsesOnlyStrictNumericAddresses) {
  EXPECT_FALSE(IpAddress::parse("127.1"));      // shorthand some resolvers accept
  EXPECT_FALSE(IpAddress::parse("0x7f.0.0.1"));
  EXPECT_FALSE(IpAddress::parse("localhost"));
  EXPECT_FALSE(IpAddress::parse("1.2.3.4.5"));
  EXPECT_EQ(IpAddress::parse("[::1]")->to_string(), "::1");
}

TEST(DestinationFilter, DefaultPolicyDeniesInternalAndAllowsPublic) {
  const DestinationPolicy policy = DestinationPolicy::deny_internal();
  EXPECT_TRUE(policy.check(*IpAddress::parse("93.184.216.34"), 443).is_ok());
  const Status s = policy.check(*IpAddress::parse("169.254.169.254"), 80);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::kPermission);
  EXPECT_NE(s.message().find("169.254.169.254:80"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("cloud metadata"), std::string::npos) << s.message();
  for (const char* a : {"127.0.0.1", "10.0.0.1", "192.168.0.1", "fe80::1", "224.0.0.1", "::1"}) {
    EXPECT_FALSE(policy.check(*IpAddress::parse(a), 80).is_ok()) << a;
  }
}

TEST(DestinationFilter, AllowRulesOpenExactlyTheirAddressAndPort) {
  DestinationPolicy policy = DestinationPolicy::deny_internal();
  policy.allow(*parse_destination_rule("127.0.0.1:8080")).allow(*parse_destination_rule("10.0.0.0/8"));
  EXPECT_TRUE(policy.check(*IpAddress::parse("127.0.0.1"), 8080).is_ok());
  EXPECT_TRUE(policy.check(*IpAddress::parse("::ffff:127.0.0.1"), 8080).is_ok());
  EXPECT_FALSE(policy.check(*IpAddress::parse("127.0.0.1"), 8081).is_ok());
  EXPECT_FALSE(policy.check(*IpAddress::parse("127.0.0.2"), 8080).is_ok());
  EXPECT_TRUE(policy.check(*IpAddress::parse("10.9.8.7"), 1).is_ok());
  EXPECT_FALSE(policy.check(*IpAddress::parse("192.168.0.1"), 80).is_ok());
}

TEST(DestinationFilter, DenyRulesWinOverAllowAndAllowAll) {
  DestinationPolicy policy = DestinationPolicy::allow_all();
  EXPECT_TRUE(policy.check(*IpAddress::parse("127.0.0.1"), 80).is_ok());
  policy.deny(*parse_destination_rule("[::1]:80")).deny(*parse_destination_rule("127.0.0.0/8"));
  policy.allow(*parse_destination_rule("127.0.0.1"));
  EXPECT_FALSE(policy.check(*IpAddress::parse("127.0.0.1"), 80).is_ok());
  EXPECT_FALSE(policy.check(*IpAddress::parse("::1"), 80).is_ok());
  EXPECT_TRUE(policy.check(*IpAddress::parse("::1"), 81).is_ok());
  EXPECT_TRUE(policy.check(*IpAddress::parse("10.0.0.1"), 80).is_ok());
}

TEST(DestinationFilter, RuleParsingErrorsAreClear) {
  for (const char* bad : {"", "example.com", "10.0.0.0/33", "127.0.0.1:0", "127.0.0.1:70000",
                          "[::1", "[::1]80", "1.2.3.4:x"}) {
    auto r = parse_destination_rule(bad);
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("destination rule"), std::string::npos);
  }
  auto v6 = parse_destination_rule("fd00::/8");
  ASSERT_TRUE(v6.is_ok());
  EXPECT_EQ(v6->cidr.prefix, 8);
  EXPECT_EQ(v6->port, 0);
}

}  // namespace
}  // namespace di::recipe::image
