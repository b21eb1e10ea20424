// Reads tokenizer.json (+ tokenizer_config.json) into a Tokenizer. Every component type is
// checked against what this tokenizer implements; anything else is kUnsupported naming the
// component. Malformed files are kParse naming the field. Never throws on bad input.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "recipe/tokenizer/byte_level.h"
#include "recipe/tokenizer/tokenizer.h"

namespace di::recipe {

using json = nlohmann::json;

namespace {

constexpr int64_t kMaxTokenId = (1 << 22) - 1;  // 4M: far above any real vocabulary (~260k)

std::string type_name(const json& j) { return j.type_name(); }

Result<bool> get_bool(const json& obj, const char* key, bool fallback, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  if (!it->is_boolean())
    return Status::parse(where + "." + key + ": expected a boolean, got " + type_name(*it));
  return it->get<bool>();
}

Result<std::string> get_type(const json& obj, const std::string& where) {
  if (!obj.is_object()) return Status::parse(where + ": expected an object, got " + type_name(obj));
  auto it = obj.find("type");
  if (it == obj.end() || !it->is_string())
    return Status::parse(where + ".type: expected a string");
  return it->get<std::string>();
}

Result<const json*> get_array(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_array())
    return Status::parse(where + "." + key + ": expected an array");
  return &*it;
}

Status parse_normalizer(const json& j, const std::string& where, Normalizer& out) {
  if (j.is_null()) return Status::ok();
  DI_ASSIGN_OR_RETURN(std::string type, get_type(j, where));
  if (type == "Sequence") {
    DI_ASSIGN_OR_RETURN(const json* list, get_array(j, "normalizers", where));
    for (size_t i = 0; i < list->size(); ++i)
      DI_RETURN_IF_ERROR(parse_normalizer((*list)[i], where + ".normalizers[" + std::to_string(i) + "]", out));
    return Status::ok();
  }
  if (type == "NFC") out.add(NormalForm::kNFC);
  else if (type == "NFD") out.add(NormalForm::kNFD);
  else if (type == "NFKC") out.add(NormalForm::kNFKC);
  else if (type == "NFKD") out.add(NormalForm::kNFKD);
  else return Status::unsupported(where + ": normalizer type \"" + type + "\" is not supported (supported: NFC, NFD, NFKC, NFKD, Sequence)");
  return Status::ok();
}

Result<SplitBehavior> parse_behavior(const json& j, const std::string& where) {
  if (!j.is_string()) return Status::parse(where + ": expected a string");
  const std::string b = j.get<std::string>();
  if (b == "Isolated") return SplitBehavior::kIsolated;
  if (b == "Removed") return SplitBehavior::kRemoved;
  if (b == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (b == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (b == "Contiguous") return SplitBehavior::kContiguous;
  return Status::parse(where + ": unknown Split behavior \"" + b + "\"");
}

// One pre-tokenizer step. `byte_level_seen` enforces ByteLevel as the last step.
Status parse_pre_step(const json& j, const std::string& where, PreTokenizer& out,
                      bool& byte_level_seen) {
  DI_ASSIGN_OR_RETURN(std::string type, get_type(j, where));
  if (byte_level_seen)
    return Status::unsupported(where + ": pre-tokenizer \"" + type + "\" after ByteLevel is not supported");
  if (type == "Split") {
    auto pat = j.find("pattern");
    if (pat == j.end() || !pat->is_object())
      return Status::parse(where + ".pattern: expected {\"Regex\": ...} or {\"String\": ...}");
    SplitStep step;
    if (auto r = pat->find("Regex"); r != pat->end() && r->is_string()) {
      auto p = SplitPattern::from_regex(r->get<std::string>());
      if (!p.is_ok()) return std::move(p).take_status().with_context(where + ".pattern.Regex");
      step.pattern = std::move(*p);
    } else if (auto s = pat->find("String"); s != pat->end() && s->is_string()) {
      auto p = SplitPattern::from_string(s->get<std::string>());
      if (!p.is_ok()) return std::move(p).take_status().with_context(where + ".pattern.String");
      step.pattern = std::move(*p);
    } else {
      return Status::parse(where + ".pattern: expected {\"Regex\": ...} or {\"String\": ...}");
    }
    auto beh = j.find("behavior");
    if (beh == j.end()) return Status::parse(where + ".behavior: missing");
    DI_ASSIGN_OR_RETURN(step.behavior, parse_behavior(*beh, where + ".behavior"));
    DI_ASSIGN_OR_RETURN(step.invert, get_bool(j, "invert", false, where));
    out.add_split(std::move(step));
    return Status::ok();
  }
  if (type == "ByteLevel") {
    DI_ASSIGN_OR_RETURN(bool prefix, get_bool(j, "add_prefix_space", true, where));
    DI_ASSIGN_OR_RETURN(bool use_regex, get_bool(j, "use_regex", true, where));
    if (use_regex) {
      // ByteLevel's own split is the GPT-2 pattern, applied Isolated.
      SplitStep step;
      DI_ASSIGN_OR_RETURN(step.pattern, SplitPattern::from_regex(
          R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)"));
      out.add_split(std::move(step));
    }
    out.set_byte_level(prefix);
    byte_level_seen = true;
    return Status::ok();
  }
  if (type == "Sequence") {
    DI_ASSIGN_OR_RETURN(const json* list, get_array(j, "pretokenizers", where));
    for (size_t i = 0; i < list->size(); ++i)
      DI_RETURN_IF_ERROR(parse_pre_step((*list)[i], where + ".pretokenizers[" + std::to_string(i) + "]", out, byte_level_seen));
    return Status::ok();
  }
  return Status::unsupported(where + ": pre-tokenizer type \"" + type + "\" is not supported (supported: Sequence, Split, ByteLevel)");
}

Status parse_decoder(const json& j, const std::string& where) {
  if (j.is_null())
    return Status::unsupported(where + ": a null decoder is not supported (expected ByteLevel)");
  DI_ASSIGN_OR_RETURN(std::string type, get_type(j, where));
  if (type == "ByteLevel") return Status::ok();
  if (type == "Sequence") {
    DI_ASSIGN_OR_RETURN(const json* list, get_array(j, "decoders", where));
    if (list->size() != 1)
      return Status::unsupported(where + ": only a Sequence of one ByteLevel decoder is supported");
    return parse_decoder((*list)[0], where + ".decoders[0]");
  }
  return Status::unsupported(where + ": decoder type \"" + type + "\" is not supported (supported: ByteLevel)");
}

struct Template {
  std::vector<int32_t> prefix, suffix;
  bool set = false;
};

Status parse_template(const json& j, const std::string& where, Template& t) {
  DI_ASSIGN_OR_RETURN(const json* single, get_array(j, "single", where));
  auto specials = j.find("special_tokens");
  if (specials == j.end() || !specials->is_object())
    return Status::parse(where + ".special_tokens: expected an object");
  t = Template{};
  t.set = true;
  bool seen_a = false;
  for (size_t i = 0; i < single->size(); ++i) {
    const json& piece = (*single)[i];
    const std::string w = where + ".single[" + std::to_string(i) + "]";
    if (!piece.is_object()) return Status::parse(w + ": expected an object");
    if (auto seq = piece.find("Sequence"); seq != piece.end()) {
      if (!seq->is_object() || !seq->contains("id") || (*seq)["id"] != "A")
        return Status::unsupported(w + ": only the Sequence \"A\" is supported in a single template");
      if (seen_a) return Status::parse(w + ": Sequence \"A\" appears twice");
      seen_a = true;
    } else if (auto sp = piece.find("SpecialToken"); sp != piece.end()) {
      if (!sp->is_object() || !sp->contains("id") || !(*sp)["id"].is_string())
        return Status::parse(w + ".SpecialToken.id: expected a string");
      const std::string name = (*sp)["id"].get<std::string>();
      auto entry = specials->find(name);
      if (entry == specials->end() || !entry->is_object() || !entry->contains("ids") ||
          !(*entry)["ids"].is_array())
        return Status::parse(w + ": special token \"" + name + "\" has no ids in special_tokens");
      for (const json& id : (*entry)["ids"]) {
        if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > kMaxTokenId)
          return Status::parse(where + ".special_tokens[\"" + name + "\"].ids: expected token ids");
        (seen_a ? t.suffix : t.prefix).push_back(static_cast<int32_t>(id.get<int64_t>()));
      }
    } else {
      return Status::parse(w + ": expected {\"Sequence\": ...} or {\"SpecialToken\": ...}");
    }
  }
  if (!seen_a) return Status::parse(where + ".single: has no Sequence \"A\"");
  return Status::ok();
}

Status parse_post_processor(const json& j, const std::string& where, Template& t) {
  if (j.is_null()) return Status::ok();
  DI_ASSIGN_OR_RETURN(std::string type, get_type(j, where));
  if (type == "ByteLevel") return Status::ok();  // trims offsets only; adds no ids
  if (type == "TemplateProcessing") return parse_template(j, where, t);
  if (type == "Sequence") {
    DI_ASSIGN_OR_RETURN(const json* list, get_array(j, "processors", where));
    for (size_t i = 0; i < list->size(); ++i)
      DI_RETURN_IF_ERROR(parse_post_processor((*list)[i], where + ".processors[" + std::to_string(i) + "]", t));
    return Status::ok();
  }
  return Status::unsupported(where + ": post-processor type \"" + type + "\" is not supported (supported: ByteLevel, TemplateProcessing, Sequence)");
}

// "bos_token": "<s>" or {"content": "<s>", ...} or null.
std::optional<std::string> config_token(const json& config, const char* key) {
  auto it = config.find(key);
  if (it == config.end()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object()) {
    auto c = it->find("content");
    if (c != it->end() && c->is_string()) return c->get<std::string>();
  }
  return std::nullopt;
}

Result<std::string> read_file(const std::filesystem::path& p) {
  std::error_code ec;
  if (!std::filesystem::exists(p, ec)) return Status::not_found(p.string() + ": no such file");
  std::ifstream in(p, std::ios::binary);
  if (!in) return Status::io(p.string() + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::io(p.string() + ": read failed");
  return ss.str();
}

}  // namespace

class TokenizerLoader {
 public:
  static Result<std::shared_ptr<const Tokenizer>> build(std::string_view tokenizer_json,
                                                        std::string_view config_json);
};

Result<std::shared_ptr<const Tokenizer>> TokenizerLoader::build(std::string_view tokenizer_json,
                                                                std::string_view config_json) {
  json root = json::parse(tokenizer_json, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return Status::parse("tokenizer.json: not valid JSON");
  if (!root.is_object()) return Status::parse("tokenizer.json: expected an object");
  json config = json::object();
  if (!config_json.empty()) {
    config = json::parse(config_json, nullptr, false);
    if (config.is_discarded() || !config.is_object())
      return Status::parse("tokenizer_config.json: expected a JSON object");
  }

  std::shared_ptr<Tokenizer> tok(new Tokenizer());
  static const json kNull;
  auto field = [&](const char* key) -> const json& {
    auto it = root.find(key);
    return it == root.end() ? kNull : *it;
  };

  // --- model -----------------------------------------------------------------------------
  const json& model = field("model");
  if (!model.is_object()) return Status::parse("model: expected an object");
  if (auto t = model.find("type"); t != model.end() && (!t->is_string() || *t != "BPE"))
    return Status::unsupported("model.type: \"" + (t->is_string() ? t->get<std::string>() : type_name(*t)) + "\" is not supported (supported: BPE)");
  if (auto d = model.find("dropout"); d != model.end() && !d->is_null() &&
                                       !(d->is_number() && d->get<double>() == 0.0))
    return Status::unsupported("model.dropout: BPE dropout is not supported");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    auto it = model.find(key);
    if (it != model.end() && !it->is_null() && !(it->is_string() && it->get<std::string>().empty()))
      return Status::unsupported(std::string("model.") + key + ": only null or \"\" is supported");
  }
  BpeConfig bpe;
  DI_ASSIGN_OR_RETURN(bpe.ignore_merges, get_bool(model, "ignore_merges", false, "model"));
  DI_ASSIGN_OR_RETURN(bpe.byte_fallback, get_bool(model, "byte_fallback", false, "model"));
  DI_ASSIGN_OR_RETURN(bpe.fuse_unk, get_bool(model, "fuse_unk", false, "model"));

  auto vocab_it = model.find("vocab");
  if (vocab_it == model.end() || !vocab_it->is_object())
    return Status::parse("model.vocab: expected an object of token -> id");
  std::vector<std::pair<std::string, int32_t>> vocab;
  vocab.reserve(vocab_it->size());
  int64_t max_id = -1;
  for (auto it = vocab_it->begin(); it != vocab_it->end(); ++it) {
    if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > kMaxTokenId)
      return Status::parse("model.vocab[\"" + it.key() + "\"]: expected an id in 0.." + std::to_string(kMaxTokenId));
    vocab.emplace_back(it.key(), static_cast<int32_t>(it->get<int64_t>()));
    max_id = std::max<int64_t>(max_id, it->get<int64_t>());
  }
  if (auto u = model.find("unk_token"); u != model.end() && !u->is_null()) {
    if (!u->is_string()) return Status::parse("model.unk_token: expected a string or null");
    auto hit = vocab_it->find(u->get<std::string>());
    if (hit == vocab_it->end())
      return Status::parse("model.unk_token: \"" + u->get<std::string>() + "\" is not in model.vocab");
    bpe.unk_id = static_cast<int32_t>(hit->get<int64_t>());
  }

  auto merges_it = model.find("merges");
  if (merges_it == model.end() || !merges_it->is_array())
    return Status::parse("model.merges: expected an array");
  std::vector<std::pair<std::string, std::string>> merges;
  merges.reserve(merges_it->size());
  for (size_t i = 0; i < merges_it->size(); ++i) {
    const json& m = (*merges_it)[i];
    const std::string where = "model.merges[" + std::to_string(i) + "]";
    if (m.is_string()) {
      const std::string& s = m.get_ref<const std::string&>();
      if (s.rfind("#version", 0) == 0) continue;
      const size_t sp = s.find(' ');
      if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
        return Status::parse(where + ": expected \"left right\" with exactly one space, got \"" + s + "\"");
      merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else {
      return Status::parse(where + ": expected \"left right\" or [\"left\", \"right\"]");
    }
  }
  DI_ASSIGN_OR_RETURN(tok->model_, BpeModel::build(vocab, merges, bpe));

  // --- normalizer, pre-tokenizer, post-processor, decoder ---------------------------------
  DI_RETURN_IF_ERROR(parse_normalizer(field("normalizer"), "normalizer", tok->normalizer_));
  bool byte_level = false;
  if (field("pre_tokenizer").is_null())
    return Status::unsupported("pre_tokenizer: null is not supported (a byte-level BPE needs ByteLevel)");
  DI_RETURN_IF_ERROR(parse_pre_step(field("pre_tokenizer"), "pre_tokenizer", tok->pre_tokenizer_, byte_level));
  if (!byte_level)
    return Status::unsupported("pre_tokenizer: has no ByteLevel step (only byte-level BPE is supported)");
  Template tmpl;
  DI_RETURN_IF_ERROR(parse_post_processor(field("post_processor"), "post_processor", tmpl));
  DI_RETURN_IF_ERROR(parse_decoder(field("decoder"), "decoder"));

  // --- added tokens ----------------------------------------------------------------------
  std::vector<AddedToken> added;
  if (const json& list = field("added_tokens"); !list.is_null()) {
    if (!list.is_array()) return Status::parse("added_tokens: expected an array");
    for (size_t i = 0; i < list.size(); ++i) {
      const json& a = list[i];
      const std::string where = "added_tokens[" + std::to_string(i) + "]";
      if (!a.is_object()) return Status::parse(where + ": expected an object");
      AddedToken t;
      auto id = a.find("id");
      if (id == a.end() || !id->is_number_integer() || id->get<int64_t>() < 0 || id->get<int64_t>() > kMaxTokenId)
        return Status::parse(where + ".id: expected an id in 0.." + std::to_string(kMaxTokenId));
      t.id = static_cast<int32_t>(id->get<int64_t>());
      auto content = a.find("content");
      if (content == a.end() || !content->is_string() || content->get_ref<const std::string&>().empty())
        return Status::parse(where + ".content: expected a non-empty string");
      t.content = content->get<std::string>();
      DI_ASSIGN_OR_RETURN(t.special, get_bool(a, "special", false, where));
      DI_ASSIGN_OR_RETURN(t.single_word, get_bool(a, "single_word", false, where));
      DI_ASSIGN_OR_RETURN(t.lstrip, get_bool(a, "lstrip", false, where));
      DI_ASSIGN_OR_RETURN(t.rstrip, get_bool(a, "rstrip", false, where));
      DI_ASSIGN_OR_RETURN(t.normalized, get_bool(a, "normalized", !t.special, where));
      max_id = std::max<int64_t>(max_id, t.id);
      added.push_back(std::move(t));
    }
  }
  Status norm_status;
  tok->added_.build(std::move(added), [&](const std::string& content) {
    std::string out;
    Status st = tok->normalizer_.apply(content, out);
    if (!st.is_ok()) norm_status = st;
    return out;
  });
  DI_RETURN_IF_ERROR(norm_status);

  // --- id tables ---------------------------------------------------------------------------
  const size_t n = static_cast<size_t>(max_id + 1);
  tok->token_bytes_.assign(n, std::string());
  tok->spellings_.assign(n, std::string());
  tok->flags_.assign(n, 0);
  tok->spelling_to_id_.reserve(vocab.size() + tok->added_.tokens().size());
  for (const AddedToken& t : tok->added_.tokens()) {
    auto bytes = byte_level_decode(t.content);
    tok->token_bytes_[t.id] = bytes ? *bytes : t.content;
    tok->spellings_[t.id] = t.content;
    tok->flags_[t.id] = Tokenizer::kValid | Tokenizer::kAdded | (t.special ? Tokenizer::kSpecial : 0);
    tok->spelling_to_id_.insert(t.content, t.id);
  }
  for (const auto& [spelling, id] : vocab) {
    tok->spelling_to_id_.insert(spelling, id);
    if (tok->flags_[id] & Tokenizer::kAdded) continue;  // the added token's entry wins
    if (tok->flags_[id] & Tokenizer::kValid)
      return Status::parse("model.vocab[\"" + spelling + "\"]: id " + std::to_string(id) + " is used twice");
    auto bytes = byte_level_decode(spelling);
    tok->token_bytes_[id] = bytes ? *bytes : spelling;
    tok->spellings_[id] = spelling;
    tok->flags_[id] = Tokenizer::kValid;
  }
  auto check_ids = [&](const std::vector<int32_t>& ids, const char* what) -> Status {
    for (int32_t id : ids)
      if (!tok->is_valid_id(id))
        return Status::parse(std::string("post_processor: ") + what + " id " + std::to_string(id) + " is not in the vocabulary");
    return Status::ok();
  };
  DI_RETURN_IF_ERROR(check_ids(tmpl.prefix, "template"));
  DI_RETURN_IF_ERROR(check_ids(tmpl.suffix, "template"));

  // --- tokenizer_config.json -------------------------------------------------------------
  if (auto bos = config_token(config, "bos_token")) tok->bos_id_ = tok->token_to_id(*bos);
  if (auto eos = config_token(config, "eos_token")) tok->eos_id_ = tok->token_to_id(*eos);
  const bool llama_fast = config.contains("tokenizer_class") && config["tokenizer_class"] == "LlamaTokenizerFast";
  if (llama_fast) {
    // transformers replaces the post-processor of LlamaTokenizerFast with
    // [bos if add_bos_token] $A [eos if add_eos_token] (add_bos_token defaults to true).
    DI_ASSIGN_OR_RETURN(bool add_bos, get_bool(config, "add_bos_token", true, "tokenizer_config"));
    DI_ASSIGN_OR_RETURN(bool add_eos, get_bool(config, "add_eos_token", false, "tokenizer_config"));
    tmpl = Template{};
    if (add_bos && tok->bos_id_) tmpl.prefix.push_back(*tok->bos_id_);
    if (add_eos && tok->eos_id_) tmpl.suffix.push_back(*tok->eos_id_);
  }
  tok->prefix_ids_ = tmpl.prefix;
  tok->suffix_ids_ = tmpl.suffix;
  tok->add_bos_token_ = tok->bos_id_ && !tmpl.prefix.empty() && tmpl.prefix.front() == *tok->bos_id_;
  return std::shared_ptr<const Tokenizer>(std::move(tok));
}

Result<std::shared_ptr<const Tokenizer>> Tokenizer::from_json(std::string_view tokenizer_json,
                                                              std::string_view config_json) {
  try {
    return TokenizerLoader::build(tokenizer_json, config_json);
  } catch (const json::exception& e) {
    // A type mismatch the checks above did not anticipate: still a malformed file, not a bug
    // worth crashing for.
    return Status::parse(std::string("tokenizer.json: ") + e.what());
  }
}

Result<std::shared_ptr<const Tokenizer>> Tokenizer::load(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p(path);
  if (!fs::exists(p, ec)) return Status::not_found(path + ": no such file or directory");
  fs::path file = fs::is_directory(p, ec) ? p / "tokenizer.json" : p;
  DI_ASSIGN_OR_RETURN(std::string text, read_file(file));
  std::string config;
  fs::path config_path = file.parent_path() / "tokenizer_config.json";
  if (fs::exists(config_path, ec)) {
    DI_ASSIGN_OR_RETURN(config, read_file(config_path));
  }
  auto r = from_json(text, config);
  if (!r.is_ok()) return std::move(r).take_status().with_context(file.string());
  return r;
}

}  // namespace di::recipe
