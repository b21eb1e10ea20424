// RecipeTokenText: TokenText over recipe::Tokenizer's precomputed token bytes.
#include "capi/src/engine_token_text.h"

#include <filesystem>

#include "recipe/tokenizer/tokenizer.h"
#include "recipe/tokenizer/tokenizer_cache.h"

namespace di::capi {
namespace {

class RecipeTokenText final : public engine::TokenText {
 public:
  explicit RecipeTokenText(std::shared_ptr<const recipe::Tokenizer> t) : t_(std::move(t)) {}
  int64_t vocab_size() const override { return t_->vocab_size(); }
  std::string_view token_bytes(int32_t id) const override {
    if (id < 0 || id >= t_->vocab_size()) return {};
    return t_->all_token_bytes()[static_cast<size_t>(id)];
  }
  bool is_special(int32_t id) const override { return t_->is_special(id); }

 private:
  std::shared_ptr<const recipe::Tokenizer> t_;
};

}  // namespace

std::shared_ptr<const engine::TokenText> make_token_text(std::shared_ptr<const recipe::Tokenizer> tokenizer) {
  return std::make_shared<RecipeTokenText>(std::move(tokenizer));
}

Result<std::shared_ptr<const recipe::Tokenizer>> load_engine_tokenizer(const std::string& model_dir) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::path(model_dir) / "tokenizer.json", ec))
    return std::shared_ptr<const recipe::Tokenizer>();
  auto tok = recipe::load_shared_tokenizer(model_dir);
  if (!tok.is_ok()) return Status(tok.status()).with_context("tokenizer.json");
  return std::move(tok).value();
}

Result<std::shared_ptr<const engine::TokenText>> load_engine_token_text(const std::string& model_dir) {
  DI_ASSIGN_OR_RETURN(std::shared_ptr<const recipe::Tokenizer> tok, load_engine_tokenizer(model_dir));
  if (!tok) return std::shared_ptr<const engine::TokenText>();
  return make_token_text(std::move(tok));
}

}  // namespace di::capi
