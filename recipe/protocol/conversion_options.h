// ConversionOptions: how the request parsers fill what a request leaves open. Shared by the
// three protocols; set once per recipe.
#pragma once

namespace di::recipe {

struct ConversionOptions {
  // Thinking mode when the request says nothing about it (DeepSeek's hosted API defaults on).
  bool default_thinking = true;
  // Anthropic server tools (web_search_*): false = 400 "server tools are not supported";
  // true = drop them. Responses web_search tools are always dropped (they are the client's).
  bool ignore_server_tools = false;
};

}  // namespace di::recipe
