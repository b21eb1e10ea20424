// Finding and reading a model directory's chat template. chat_template.jinja wins over
// tokenizer_config.json (as in transformers); a list of named templates uses "default".
#include "recipe/chat_template/model_chat_template.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

namespace di::recipe::chat_template {
namespace {

namespace fs = std::filesystem;

fs::path model_dir_of(const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  return fs::is_directory(p, ec) ? p : p.parent_path();
}

bool read_file(const fs::path& p, std::string* out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), {});
  return true;
}

// A special token as tokenizer_config.json writes it: a string or an AddedToken object.
std::optional<std::string> special_token(const nlohmann::json& cfg, const char* key) {
  if (!cfg.contains(key)) return std::nullopt;
  const nlohmann::json& v = cfg[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  return std::nullopt;
}

}  // namespace

bool is_deepseek_model_dir(const std::string& path) {
  std::string text;
  if (read_file(model_dir_of(path) / "config.json", &text)) {
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object() || !j.contains("model_type") || !j["model_type"].is_string()) return false;
    return j["model_type"].get<std::string>().rfind("deepseek", 0) == 0;
  }
  // A tokenizer folder without config.json: DeepSeek's tokenizers are the ones whose BOS is
  // <｜begin▁of▁sentence｜>.
  if (!read_file(model_dir_of(path) / "tokenizer_config.json", &text)) return false;
  const nlohmann::json cfg = nlohmann::json::parse(text, nullptr, false);
  if (!cfg.is_object()) return false;
  const std::optional<std::string> bos = special_token(cfg, "bos_token");
  return bos && bos->find("begin▁of▁sentence") != std::string::npos;
}

Result<std::shared_ptr<const ModelChatTemplate>> load_model_chat_template(const std::string& path) {
  const fs::path dir = model_dir_of(path);
  std::string source, origin;
  nlohmann::json cfg = nlohmann::json::object();
  std::string cfg_text;
  const fs::path cfg_path = dir / "tokenizer_config.json";
  if (read_file(cfg_path, &cfg_text)) {
    cfg = nlohmann::json::parse(cfg_text, nullptr, false);
    if (!cfg.is_object()) return Status::parse(cfg_path.string() + ": not a JSON object");
  }
  if (read_file(dir / "chat_template.jinja", &source)) {
    origin = (dir / "chat_template.jinja").string();
  } else if (cfg.contains("chat_template")) {
    origin = cfg_path.string() + ": chat_template";
    const nlohmann::json& t = cfg["chat_template"];
    if (t.is_string()) {
      source = t.get<std::string>();
    } else if (t.is_array()) {
      bool found = false;
      for (const nlohmann::json& e : t)
        if (e.is_object() && e.value("name", "") == "default" && e.contains("template") && e["template"].is_string()) {
          source = e["template"].get<std::string>();
          found = true;
        }
      if (!found) return Status::invalid_argument(origin + ": a list of templates without one named \"default\"");
    } else if (t.is_null()) {
      return std::shared_ptr<const ModelChatTemplate>();
    } else {
      return Status::invalid_argument(origin + ": expected a string or a list of named templates");
    }
  } else {
    return std::shared_ptr<const ModelChatTemplate>();
  }
  auto parsed = ChatTemplate::parse(source);
  if (!parsed.is_ok()) return Status(parsed.status().code(), origin + ": " + parsed.status().message());
  auto m = std::make_shared<ModelChatTemplate>(ModelChatTemplate{std::move(parsed).value(), origin, {}, {}});
  m->bos_token = special_token(cfg, "bos_token");
  m->eos_token = special_token(cfg, "eos_token");
  m->tool_format = template_tool_format(source);
  return std::shared_ptr<const ModelChatTemplate>(std::move(m));
}

ToolCallFormat template_tool_format(std::string_view source) {
  if (source.find("<tool_call>") != std::string_view::npos) return ToolCallFormat::kHermes;
  if (source.find("<|python_tag|>") != std::string_view::npos) return ToolCallFormat::kLlama3Json;
  if (source.find("<|start_header_id|>") != std::string_view::npos && source.find("\"parameters\"") != std::string_view::npos)
    return ToolCallFormat::kLlama3Json;
  return ToolCallFormat::kNone;
}

Result<std::shared_ptr<const ModelChatTemplate>> recipe_chat_template(const std::string& path,
                                                                       const std::optional<std::string>& encoding) {
  if (encoding && *encoding != "chat_template") return std::shared_ptr<const ModelChatTemplate>();
  if (!encoding && is_deepseek_model_dir(path)) return std::shared_ptr<const ModelChatTemplate>();
  DI_ASSIGN_OR_RETURN(auto t, load_model_chat_template(path));
  if (!t && encoding)
    return Status::not_found("recipe_encoding \"chat_template\": " + model_dir_of(path).string() +
                             " has no chat_template.jinja and no chat_template in tokenizer_config.json");
  return t;
}

}  // namespace di::recipe::chat_template
