// The C ABI's core: versions, status names, error objects, build info.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "deepinfer.h"

TEST(CoreAbi, AbiVersionMatchesHeader) {
  EXPECT_EQ(di_abi_version(), static_cast<uint32_t>(DI_ABI_VERSION));
  EXPECT_EQ(di_abi_version() / 10000, static_cast<uint32_t>(DI_VERSION_MAJOR));
}

TEST(CoreAbi, VersionStringStartsWithHeaderVersion) {
  const std::string v = di_version_string();
  const std::string want = std::to_string(DI_VERSION_MAJOR) + "." +
                           std::to_string(DI_VERSION_MINOR) + "." +
                           std::to_string(DI_VERSION_PATCH);
  EXPECT_EQ(v.rfind(want, 0), 0u) << v;
}

TEST(CoreAbi, BuildInfoIsJsonWithCapabilities) {
  const auto j = nlohmann::json::parse(di_build_info());
  EXPECT_TRUE(j.at("cuda").is_boolean());
  EXPECT_TRUE(j.at("cuda_devices").is_number_integer());
  EXPECT_GE(j.at("cpu_threads").get<int>(), 1);
  EXPECT_EQ(j.at("abi_version").get<uint32_t>(), di_abi_version());
}

TEST(CoreAbi, EveryStatusHasADistinctName) {
  const di_status all[] = {DI_OK,          DI_TIMEOUT,       DI_END_OF_STREAM, DI_AGAIN,
                           DI_BUFFER_TOO_SMALL, DI_E_INVALID_ARG, DI_E_OOM, DI_E_UNSUPPORTED,
                           DI_E_NOT_FOUND, DI_E_IO,          DI_E_PARSE,       DI_E_CANCELLED,
                           DI_E_INTERNAL,  DI_E_LIMIT,       DI_E_STATE,       DI_E_DEVICE,
                           DI_E_PERMISSION};
  std::set<std::string> names;
  for (di_status s : all) {
    const std::string n = di_status_name(s);
    EXPECT_EQ(n.rfind("DI_", 0), 0u);
    EXPECT_NE(n, "DI_UNKNOWN_STATUS") << s;
    names.insert(n);
  }
  EXPECT_EQ(names.size(), sizeof(all) / sizeof(all[0]));
  EXPECT_STREQ(di_status_name(12345), "DI_UNKNOWN_STATUS");
  EXPECT_STREQ(di_status_name(-12345), "DI_UNKNOWN_STATUS");
}

TEST(CoreAbi, NullErrorAccessorsAreSafe) {
  EXPECT_EQ(di_error_code(nullptr), DI_E_INVALID_ARG);
  EXPECT_STREQ(di_error_message(nullptr), "");
  EXPECT_STREQ(di_error_detail(nullptr), "");
  di_error_destroy(nullptr);
  di_free(nullptr);
}

TEST(CoreAbi, ErrorCarriesCodeAndMessage) {
  di_error* err = nullptr;
  EXPECT_EQ(di_options_create(nullptr, &err), DI_E_INVALID_ARG);
  ASSERT_NE(err, nullptr);
  EXPECT_EQ(di_error_code(err), DI_E_INVALID_ARG);
  EXPECT_NE(std::string(di_error_message(err)).find("out"), std::string::npos);
  EXPECT_STREQ(di_error_detail(err), "");
  di_error_destroy(err);
}

TEST(CoreAbi, NullErrOutPointerIsAllowed) {
  EXPECT_EQ(di_options_create(nullptr, nullptr), DI_E_INVALID_ARG);
}
