// read_recipe_config: encoding, model names, context budget, conversion defaults and the image
// policy with its fetch options (remote switch, destinations, limits, timeouts).
#include "capi/src/recipe_options.h"

#include <optional>
#include <string>

#include "recipe/image/destination_filter.h"

namespace di::capi {
namespace {

using json = nlohmann::json;

class Reader {
 public:
  explicit Reader(const di_options* o) : o_(o) {}

  const di_options::Value* find(const char* k) const {
    auto it = o_->values.find(k);
    return it == o_->values.end() ? nullptr : &it->second;
  }
  std::optional<int64_t> i64(const char* k) const {
    const auto* v = find(k);
    if (v == nullptr) return std::nullopt;
    return std::get<int64_t>(v->v);
  }
  std::optional<std::string> str(const char* k) const {
    const auto* v = find(k);
    if (v == nullptr) return std::nullopt;
    return std::get<std::string>(v->v);
  }
  // A positive int64 key into *out (of any integer type wide enough); absent leaves it.
  template <class T>
  Status positive(const char* k, T* out) const {
    auto n = i64(k);
    if (!n) return Status::ok();
    if (*n < 1)
      return Status::invalid_argument(std::string(k) + ": expected >= 1, got " + std::to_string(*n));
    *out = static_cast<T>(*n);
    return Status::ok();
  }

 private:
  const di_options* o_;
};

// A JSON array of destination rules ("10.0.0.0/8", "127.0.0.1:8080", "[::1]:443").
Result<std::vector<recipe::image::DestinationRule>> read_rules(const Reader& r, const char* key) {
  std::vector<recipe::image::DestinationRule> out;
  const auto* v = r.find(key);
  if (v == nullptr) return out;
  const json& a = std::get<json>(v->v);
  if (!a.is_array())
    return Status::invalid_argument(std::string(key) + ": expected an array of address rules, got " +
                                    a.type_name());
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string where = std::string(key) + "[" + std::to_string(i) + "]";
    if (!a[i].is_string())
      return Status::invalid_argument(where + ": expected a string such as \"10.0.0.0/8\", got " +
                                      a[i].dump());
    auto rule = recipe::image::parse_destination_rule(a[i].get<std::string>());
    if (!rule.is_ok()) return Status::invalid_argument(where + ": " + rule.status().message());
    out.push_back(*rule);
  }
  return out;
}

Status read_image_options(const Reader& r, recipe::ImageOptions& o) {
  if (auto n = r.i64("recipe_image_allow_remote")) o.allow_remote = *n != 0;
  DI_RETURN_IF_ERROR(r.positive("recipe_image_max_images", &o.limits.max_images));
  DI_RETURN_IF_ERROR(r.positive("recipe_image_max_bytes", &o.limits.max_image_bytes));
  DI_RETURN_IF_ERROR(r.positive("recipe_image_max_total_bytes", &o.limits.max_total_bytes));
  DI_RETURN_IF_ERROR(r.positive("recipe_image_max_concurrent_fetches", &o.limits.max_concurrent_sources));
  DI_RETURN_IF_ERROR(r.positive("recipe_image_connect_timeout_ms", &o.fetch.connect_timeout_ms));
  DI_RETURN_IF_ERROR(r.positive("recipe_image_timeout_ms", &o.fetch.total_timeout_ms));
  DI_ASSIGN_OR_RETURN(auto allow, read_rules(r, "recipe_image_allow_destinations"));
  DI_ASSIGN_OR_RETURN(auto deny, read_rules(r, "recipe_image_deny_destinations"));
  for (const auto& rule : allow) o.fetch.policy.allow(rule);
  for (const auto& rule : deny) o.fetch.policy.deny(rule);
  return Status::ok();
}

}  // namespace

Status read_recipe_config(const di_options* options, recipe::RecipeConfig& c,
                          const std::string& default_model) {
  if (options == nullptr) {
    c.models = recipe::ModelAliases(default_model);
    return Status::ok();
  }
  const Reader r(options);
  if (auto e = r.str("recipe_encoding"); e && *e != "chat_template") {
    auto enc = recipe::parse_encoding(*e);
    if (!enc.is_ok()) return Status::invalid_argument("recipe_encoding: " + enc.status().message());
    c.encoding = *enc;
  }
  std::string model = r.str("recipe_model").value_or(default_model);
  json aliases;
  if (const auto* v = r.find("recipe_model_aliases")) aliases = std::get<json>(v->v);
  DI_ASSIGN_OR_RETURN(c.models, recipe::ModelAliases::from_json(model, aliases));
  DI_RETURN_IF_ERROR(r.positive("recipe_context_length", &c.context_length));
  if (auto n = r.i64("recipe_clamp_max_tokens")) c.clamp_max_tokens = *n != 0;
  if (auto n = r.i64("recipe_default_thinking")) c.conversion.default_thinking = *n != 0;
  if (auto n = r.i64("recipe_ignore_server_tools")) c.conversion.ignore_server_tools = *n != 0;
  if (auto p = r.str("recipe_image_policy")) {
    if (*p == "unsupported") c.image_policy = recipe::ImagePolicy::kUnsupported;
    else if (*p == "reject") c.image_policy = recipe::ImagePolicy::kReject;
    else if (*p == "vision") c.image_policy = recipe::ImagePolicy::kVision;
    else return Status::invalid_argument("recipe_image_policy: expected \"unsupported\", \"reject\" or \"vision\", got \"" + *p + "\"");
    if (c.image_policy == recipe::ImagePolicy::kVision &&
        (c.encoding != recipe::Encoding::kDsv41 || r.str("recipe_encoding") == "chat_template"))
      return Status::invalid_argument("recipe_image_policy: \"vision\" needs recipe_encoding \"dsv41\"");
  }
  return read_image_options(r, c.image_options);
}

}  // namespace di::capi
