// Python json.dumps / float repr formatting, against values whose Python output is documented
// (repr of floats follows "shortest round-trip, scientific below 1e-4 and from 1e16").
#include "recipe/encoding/py_json.h"

#include <gtest/gtest.h>

namespace di::recipe {
namespace {

TEST(PyJson, FloatReprMatchesPython) {
  EXPECT_EQ(py_float_repr(0.1), "0.1");
  EXPECT_EQ(py_float_repr(3.0), "3.0");
  EXPECT_EQ(py_float_repr(-0.0), "-0.0");
  EXPECT_EQ(py_float_repr(1e100), "1e+100");
  EXPECT_EQ(py_float_repr(1e-5), "1e-05");
  EXPECT_EQ(py_float_repr(0.0001), "0.0001");
  EXPECT_EQ(py_float_repr(1e16), "1e+16");
  EXPECT_EQ(py_float_repr(1e15), "1000000000000000.0");
  EXPECT_EQ(py_float_repr(123.456), "123.456");
  EXPECT_EQ(py_float_repr(1.5e-7), "1.5e-07");
  EXPECT_EQ(py_float_repr(2.5e20), "2.5e+20");
}

TEST(PyJson, DumpsUsesPythonSeparatorsAndKeepsOrderAndUnicode) {
  auto v = nlohmann::ordered_json::parse(R"({"b": [1, 2.0, "é\n"], "a": {"x": null, "y": true}})");
  EXPECT_EQ(py_json_dumps(v), "{\"b\": [1, 2.0, \"é\\n\"], \"a\": {\"x\": null, \"y\": true}}");
  EXPECT_EQ(py_json_dumps(nlohmann::ordered_json("\x01")), "\"\\u0001\"");
  EXPECT_EQ(py_json_dumps(nlohmann::ordered_json::parse("12345678901234567890")),
            "12345678901234567890");
}

}  // namespace
}  // namespace di::recipe
