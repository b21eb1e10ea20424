// Matcher: one sequence's position in a CompiledGrammar — fills the next token's bitmask, accepts
// tokens, rolls back k tokens (speculative decoding, preemption replay). Not thread-safe: one
// matcher per sequence, used by one thread at a time. Never touches logits itself.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/constrain/compiled_grammar.h"
#include "engine/constrain/pda.h"

namespace di::engine::constrain {

class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const CompiledGrammar> grammar);

  // Writes vocab().mask_words() words: bit (id % 32) of word id / 32 is set when token id may come
  // next. EOS ids are set exactly when the grammar can end here; special and padding ids never.
  // Returns the number of allowed tokens (0 means the sequence cannot continue).
  uint32_t fill_mask(uint32_t* words);

  // Advances by one token. An EOS id is accepted only where the grammar can end and terminates
  // the matcher. A token the grammar does not allow leaves the state unchanged and returns
  // kInvalidArgument naming the token.
  Status accept_token(uint32_t id);

  // Advances by raw bytes as one step (tests, forced text). All-or-nothing like accept_token; an
  // empty run is always accepted (before EOS) and leaves the state as it was.
  Status accept_bytes(std::string_view bytes);

  // True when the bytes could be accepted now (the state is not changed).
  bool can_accept_bytes(std::string_view bytes);

  // Undoes the last k accepted steps (tokens, byte runs or EOS). k may not exceed num_steps().
  Status rollback(uint32_t k);

  void reset();

  // True once an EOS token has been accepted.
  bool is_terminated() const { return history_.back().terminated; }
  // True when the output so far is a complete match.
  bool can_end() const { return history_.back().can_end; }
  // True when no further byte is possible (only EOS may follow).
  bool must_end() const { return history_.back().tops.empty(); }
  // Accepted steps that rollback can undo.
  uint32_t num_steps() const { return static_cast<uint32_t>(history_.size() - 1); }

  const CompiledGrammar& compiled() const { return *grammar_; }

 private:
  struct State {
    std::vector<StackTop> tops;
    bool can_end = false;
    bool terminated = false;
    size_t pool_size = 1;
  };
  // Runs bytes from `from`; on success *to holds the result. Frames it pushes stay in pool_.
  bool advance(const State& from, std::string_view bytes, State* to);
  void check_uncertain(const StackTop& top, const std::vector<uint32_t>& ids, uint32_t* words, uint32_t* count);

  std::shared_ptr<const CompiledGrammar> grammar_;
  Pda pda_;
  FramePool pool_;
  std::vector<State> history_;
  // Scratch for mask computation (per byte depth).
  std::vector<std::vector<StackTop>> depth_states_;
  std::vector<char> depth_bottom_;
};

}  // namespace di::engine::constrain
