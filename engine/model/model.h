// Model: the seam between the engine (scheduler, KV cache, sampler) and a model family. A family
// declares the cache it needs per sequence as cache groups and runs one forward over a batch of
// sequences; it never allocates per-sequence memory itself — it reads and writes entries through
// the SequenceCache each sequence brings, which the engine backs with paged blocks.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "engine/sample/sample_spec.h"
#include "engine/sample/sampler.h"
#include "kernels/cache_view.h"

namespace di::engine {

// How a cache group's entry count grows with a sequence of num_tokens tokens.
enum class CacheKind {
  kFull,         // one entry per token: entries 0..num_tokens-1, indexed by position
  kSlidingRing,  // a ring of `window` entries; the model indexes it with position % window
  kCompressed,   // one entry per `compress_rate` tokens: entry j covers [j*m, (j+1)*m)
  kStateSlot,    // `state_entries` entries per sequence whatever its length
};

struct CacheGroupSpec {
  std::string name;         // e.g. "swa_kv", "csa_kv", "csa_index_keys", "hca_kv", "csa_state"
  CacheKind kind = CacheKind::kFull;
  int32_t num_layers = 0;   // layers that share this layout; entries are stored per layer
  int64_t entry_bytes = 0;  // bytes of one entry of one layer
  int32_t window = 0;       // kSlidingRing
  int32_t compress_rate = 1;  // kCompressed
  int32_t state_entries = 0;  // kStateSlot
};

// Entries a sequence of `num_tokens` tokens needs in `spec` (what the engine must reserve).
int64_t cache_entries_needed(const CacheGroupSpec& spec, int64_t num_tokens);

// A sequence's view of its cache. The engine's implementation maps (group, layer, index) to a
// paged block; tests may use ContiguousSequenceCache. Entries are uninitialised until written.
class SequenceCache {
 public:
  virtual ~SequenceCache() = default;
  // Address of entry `index` of `layer` in cache group `group`. The caller guarantees
  // index < cache_entries_needed(spec, tokens after this step).
  virtual void* entry(int32_t group, int32_t layer, int64_t index) = 0;
  // Where a group's entries live, for device kernels that address entries themselves; block_ids
  // is a host array (the sequence's block table) that a model uploads before a kernel reads it.
  // False when this cache cannot describe the group that way.
  virtual bool paged_view(int32_t /*group*/, kernels::CacheView* /*view*/) { return false; }
};

// Where the engine puts a model's cache memory: a device model gives its own allocator, host
// models none (Model::cache_memory() returns null and the engine uses host memory).
class CacheMemory {
 public:
  virtual ~CacheMemory() = default;
  virtual bool on_device() const = 0;
  // Zeroed memory of `bytes`; release() gives it back.
  virtual Result<uint8_t*> allocate_zeroed(int64_t bytes) = 0;
  virtual void release(uint8_t* p) = 0;
  // Copies between two allocations of this memory. A device memory orders its copies with the
  // model's forwards (its stream), so a copy and the next forward never race.
  virtual Status copy(uint8_t* dst, const uint8_t* src, int64_t bytes) = 0;
  // `rows` copies of `width` bytes, row r from src + r * src_pitch to dst + r * dst_pitch (the
  // same entry of every layer of a group in one call on a device).
  virtual Status copy_rows(uint8_t* dst, int64_t dst_pitch, const uint8_t* src, int64_t src_pitch, int64_t width,
                           int64_t rows) {
    for (int64_t r = 0; r < rows; ++r) DI_RETURN_IF_ERROR(copy(dst + r * dst_pitch, src + r * src_pitch, width));
    return Status::ok();
  }
  // The most cache bytes the model's options allow now (gpu_memory_utilization of the device
  // minus what is already in use), or 0 when it sets no bound.
  virtual int64_t budget_bytes() const = 0;
};

// A simple owner of all entries in one allocation per (group, layer), for tests and tools.
class ContiguousSequenceCache final : public SequenceCache {
 public:
  ContiguousSequenceCache(std::vector<CacheGroupSpec> specs, int64_t max_tokens);
  void* entry(int32_t group, int32_t layer, int64_t index) override;

 private:
  std::vector<CacheGroupSpec> specs_;
  std::vector<std::vector<std::vector<uint8_t>>> storage_;  // [group][layer] bytes
};

// One sequence's share of a forward: `num_tokens` new tokens starting at absolute position
// `start_pos` (the number of tokens already in its cache).
struct SequenceInput {
  const int32_t* tokens = nullptr;
  int32_t num_tokens = 0;
  int64_t start_pos = 0;
  SequenceCache* cache = nullptr;
  bool all_logits = false;  // true: a logits row per token; false: only the last token's
  // Speculative decoding: the model keeps this sequence's hidden rows for propose_drafts().
  bool keep_hidden = false;
};

// Structured output: the allowed-token bitmasks of a forward's sequences, computed on the host.
// A model that applies them itself (Model::applies_logits_masks) calls fill() once the forward
// is launched, so the masks are built while the device computes, and sets each masked
// sequence's logits row to -inf wherever its mask has a 0 bit before returning the logits.
class LogitsMaskSource {
 public:
  virtual ~LogitsMaskSource() = default;
  // For each sequence s of the batch: when it needs a mask, writes it to words + s * words_per_row
  // (bit t % 32 of word t / 32 set = token t allowed; words_per_row >= ceil(vocab_size / 32))
  // and sets masked[s] = 1; otherwise sets masked[s] = 0 and leaves its words alone. The mask
  // is for the sequence's last logits row.
  virtual void fill(uint32_t* words, int64_t words_per_row, uint8_t* masked) = 0;
};

struct ForwardBatch {
  std::vector<SequenceInput> seqs;
  LogitsMaskSource* masks = nullptr;  // only given to models that apply masks
};

// Speculative decoding with the model's own draft layers (multi-token prediction). The draft
// layer at position i reads the main model's hidden row i and the token after i, and predicts the
// token after that; it has a cache of its own (rows the model declares among its groups), which
// must see every position of the sequence, so the engine runs it after each forward over all the
// positions whose next token is known.
struct DraftInput {
  int32_t batch_index = 0;  // the sequence's index in the last forward()'s batch (keep_hidden set)
  SequenceCache* cache = nullptr;
  int64_t start_pos = 0;      // its start_pos in that forward
  int32_t num_positions = 0;  // its first rows whose next token is known (committed tokens)
  const int32_t* next_tokens = nullptr;  // num_positions tokens: the token after each position
  int32_t max_drafts = 0;     // draft tokens wanted after the last of them (0: cache rows only)
};

// Picks each draft token from the draft head's logits (the engine's sampler, constraint masks).
class DraftChooser {
 public:
  virtual ~DraftChooser() = default;
  // Draft j (0-based) of draft input `seq` from its logits row (vocab_size floats); returns the
  // token the draft continues from, or -1 to end that sequence's draft there.
  virtual int32_t choose(size_t seq, int32_t j, std::span<const float> logits) = 0;
};

// One sequence of a speculative decode step verified greedily on the device
// (Model::verify_greedy): its forward input is its last committed token and then `num_draft`
// draft tokens (all_logits when num_draft > 0, keep_hidden set).
struct GreedyVerify {
  int32_t num_draft = 0;
  SampleSpec spec;  // the sequence's draw: greedy and without logit edits (the model sets its row)
  // Set by verify_greedy:
  int32_t accepted = 0;  // leading draft tokens equal to the target's draw before them
  // The target's draws at rows 0..accepted: drawn[j] is draft j for j < accepted, and
  // drawn[accepted] the token after them (an error when that draw failed).
  std::vector<Result<SampledToken>> drawn;
  // The draft layer's greedy pick after the last known position (its logprob at temperature 1):
  // the first token of the sequence's next draft.
  Result<SampledToken> draft = Status::internal("no draft drawn");
};

struct ModelInfo {
  std::string family;        // "deepseek_v4", "deepseek_v3", "llama", ...
  std::string model_dir;
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;
  int32_t bos_token_id = -1;
  std::vector<int32_t> eos_token_ids;
  std::string device = "cpu";
};

// The ModelInfo fields every family's config spells the same way (vocab_size,
// max_position_embeddings, bos_token_id, eos_token_ids).
template <typename Config>
ModelInfo model_info_from(std::string family, std::string model_dir, const Config& c) {
  ModelInfo info;
  info.family = std::move(family);
  info.model_dir = std::move(model_dir);
  info.vocab_size = c.vocab_size;
  info.max_position_embeddings = c.max_position_embeddings;
  info.bos_token_id = c.bos_token_id;
  info.eos_token_ids = c.eos_token_ids;
  return info;
}

class Model {
 public:
  virtual ~Model() = default;
  virtual const ModelInfo& info() const = 0;
  virtual const std::vector<CacheGroupSpec>& cache_groups() const = 0;
  // Runs one forward. `logits` is resized to [rows, vocab_size] row-major, where rows are, in
  // batch order, num_tokens rows for a sequence with all_logits and one row otherwise.
  virtual Status forward(const ForwardBatch& batch, std::vector<float>& logits) = 0;
  // The memory its caches must live in; null: host memory.
  virtual CacheMemory* cache_memory() { return nullptr; }
  // True when forward() applies ForwardBatch::masks to its logits (device models, where the
  // masks then cost no step time); false: the sampler applies them on the host.
  virtual bool applies_logits_masks() const { return false; }
  // True when forward_sample() draws on the model's device, so that only the chosen ids and the
  // requested logprobs cross to the host; false: the engine samples forward()'s logits itself.
  virtual bool samples_on_device() const { return false; }
  // The forward, then the draws `specs` describe (SampleSpec::row = a logits row as forward()
  // lays them out, constraint masks from batch.masks applied first): `out` gets one result per
  // spec (a row with nothing to draw gets the sampler's error). Only where samples_on_device().
  virtual Status forward_sample(const ForwardBatch& batch, std::span<const SampleSpec> specs,
                                std::vector<Result<SampledToken>>& out) {
    (void)batch, (void)specs, (void)out;
    return Status::unsupported("this model samples on the host");
  }
  // Batch invariance, for the engine's deterministic mode: once this returns true, a sequence's
  // logits (and device draws) have the same bits whatever else runs in its forward, however its
  // tokens are split into chunks and whether its prefix was computed in another forward. Call it
  // before the first forward. False: the model cannot promise it, and the engine runs each
  // sequence in a forward of its own.
  virtual bool enable_batch_invariance() { return false; }
  // OK when propose_drafts() works on this model; else why not (no MTP layers in the checkpoint,
  // a device path without drafts).
  virtual Status drafts_supported() const {
    return Status::unsupported(info().family + ": this model has no MTP (draft) layers");
  }
  // Runs the draft layers over each input's known positions (their cache rows become what a run
  // without drafts leaves) and then up to max_drafts draft steps, asking `chooser` for each token.
  // Draft steps beyond the known positions leave no trace in the cache. Reads the hidden rows the
  // last forward() kept; inputs must name sequences of that forward.
  virtual Status propose_drafts(std::span<const DraftInput> inputs, DraftChooser& chooser) {
    (void)inputs, (void)chooser;
    return drafts_supported();
  }
  // True when verify_greedy() and extend_drafts() work (device models with draft layers).
  virtual bool verifies_on_device() const { return false; }
  // A speculative decode step without host round trips between its parts: the forward of
  // `batch` (seqs[i] as GreedyVerify describes), the greedy draws of all its rows, each
  // sequence's accepted prefix, the draft layers' pass over all its rows with the tokens so
  // decided as their next tokens (the rows up to the accepted prefix's end become what
  // propose_drafts() leaves; the rows after it, in the sliding rings, are rolled back with the
  // main layers' by the caller) and the pick of each sequence's first draft token; then one copy
  // to the host and one wait. The masks of `batch` must be unset.
  virtual Status verify_greedy(const ForwardBatch& batch, std::span<GreedyVerify> seqs) {
    (void)batch, (void)seqs;
    return Status::unsupported(info().family + ": no greedy verification on the device");
  }
  // Device seconds of the draft layers' pass (and the first draft picks) in the last
  // verify_greedy(), timed on the model's stream; 0 when the model does not time it. The engine's
  // draft-length rule charges it to the draft, not to the forward it ran within.
  virtual double last_draft_pass_seconds() const { return 0; }
  // Draft steps after verify_greedy(): input s (batch_index its index there, num_positions its
  // accepted drafts + 1) continues from `first[s]`, its first draft token (-1: none), asking
  // `chooser` for drafts 1 .. max_drafts - 1 (next_tokens is not read). Leaves no trace in the cache.
  virtual Status extend_drafts(std::span<const DraftInput> inputs, std::span<const int32_t> first,
                               DraftChooser& chooser) {
    (void)inputs, (void)first, (void)chooser;
    return Status::unsupported(info().family + ": no greedy verification on the device");
  }
};

class WeightProgress;  // weight_progress.h

struct ModelOptions {
  std::string device = "cpu";  // "cpu", "cuda", or "auto" (cuda when a GPU is present and the
                               // family has a CUDA path, else cpu)
  int32_t num_threads = 0;     // 0: all cores
  double gpu_memory_utilization = 0.9;  // share of the GPU's memory weights + caches may take
  // CUDA: the most device bytes the model (weights, workspaces, caches) may take; 0: no cap
  // besides gpu_memory_utilization. A model whose weights do not fit fails at load with the numbers.
  int64_t gpu_memory_limit_bytes = 0;
  bool enforce_eager = false;           // CUDA: never capture decode steps in CUDA graphs
  // CUDA, fp8 checkpoints: batches of 4 or more rows quantize their activations per 1 x 128
  // to e4m3 and run on the fp8 tensor cores (DeepSeek's own scheme); false keeps every product
  // on bf16 activations against the dequantized weights.
  bool fp8_activations = true;
  WeightProgress* weight_progress = nullptr;  // the load's progress (weight_progress.h); not owned
};

// Loads the model directory (config.json, *.safetensors) with the family its config names.
Result<std::unique_ptr<Model>> load_model(const std::string& model_dir, const ModelOptions& options);

}  // namespace di::engine
