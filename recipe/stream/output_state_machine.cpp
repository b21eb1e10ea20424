// OutputStateMachine: the stage table. Branch order is priority: the first marker to complete on
// a byte wins and every partial match restarts with the next stage. Behaviour follows the DeepSeek
// recipe's parser (stages, markers, newline rules); the JSON-mode, `<think>`-at-start and
// block-tag check branches are ours.
#include "recipe/stream/output_state_machine.h"

#include <algorithm>

namespace di::recipe {
namespace {

std::shared_ptr<const MarkerPattern> pat(std::string s) {
  return std::make_shared<const MarkerPattern>(std::move(s));
}

}  // namespace

OutputStateMachine::OutputStateMachine(StateMachineConfig config) : config_(std::move(config)) {
  const MarkerSet& m = config_.markers;
  think_start_ = pat(m.think_start);
  think_end_ = pat(m.think_end);
  dsml_open_ = pat("<" + m.dsml);
  dsml_close_ = pat("</" + m.dsml);
  block_v4_ = pat("tool_calls>");
  block_v41_ = pat(" calls>");
  block_end_v4_ = pat("</" + m.dsml + "tool_calls>");
  block_end_v41_ = pat("</" + m.dsml + " calls>");
  fence_json_ = pat("```json\n");
  fence_ = pat("```\n");
  brace_ = pat("{");
  bracket_ = pat("[");
  fence_end_ = pat("\n```");
  invoke_ = pat("invoke name=\"");
  quote_ = pat("\"");
  param_ = pat("parameter name=\"");
  type_true_ = pat("true\">");
  type_false_ = pat("false\">");
  type_auto_ = pat(">");
  newline_ = pat("\n");
  call_open_ = pat("<tool_call>");
  call_close_ = pat("</tool_call>");
  python_tag_ = pat("<|python_tag|>");
  for (const std::string& s : config_.end_of_turn)
    if (!s.empty()) end_of_turn_.push_back(pat(s));
  for (const std::string& s : config_.stop_sequences)
    if (!s.empty()) stops_.push_back(pat(s));

  if (config_.start_in_tool_calls) {
    at_start_ = false;
    enter(Stage::kToolCalls, false);
  } else if (config_.start_in_reasoning) {
    enter(Stage::kReasoning, true);
  } else {
    enter(Stage::kCommon, true);
  }
}

void OutputStateMachine::add(MarkerMatcher::Kind kind,
                             const std::shared_ptr<const MarkerPattern>& p, Marker marker,
                             Stage next, size_t stop_index) {
  branches_.push_back(Branch{MarkerMatcher(kind, p), marker, next, stop_index});
}

void OutputStateMachine::add_end_of_turn() {
  for (const auto& p : end_of_turn_) add(MarkerMatcher::Kind::kLiteral, p, Marker::kEndOfTurn, Stage::kFinished);
}

void OutputStateMachine::enter(Stage stage, bool leading) {
  using K = MarkerMatcher::Kind;
  stage_ = stage;
  branches_.clear();
  const bool tools = config_.parse_tool_calls && config_.tool_format == ToolCallFormat::kDsml;
  const bool hermes = config_.parse_tool_calls && config_.tool_format == ToolCallFormat::kHermes;
  const bool llama = config_.parse_tool_calls && config_.tool_format == ToolCallFormat::kLlama3Json;
  switch (stage) {
    case Stage::kCommon:
      add_end_of_turn();
      if (config_.json_object) {
        add(K::kLiteral, fence_json_, Marker::kJsonFence, Stage::kJson);
        add(K::kLiteral, fence_, Marker::kJsonFence, Stage::kJson);
        add(K::kLiteral, brace_, Marker::kJsonOpen, Stage::kJson);
        add(K::kLiteral, bracket_, Marker::kJsonOpen, Stage::kJson);
      } else {
        for (size_t i = 0; i < stops_.size(); ++i)
          add(K::kLiteral, stops_[i], Marker::kStop, Stage::kFinished, i);
      }
      if (tools) add(K::kNewlinesThen, dsml_open_, Marker::kDsmlOpen, Stage::kBlockOpen);
      if (hermes) add(K::kNewlinesThen, call_open_, Marker::kCallOpen, Stage::kCallBody);
      if (llama && at_start_) {
        add(K::kLiteral, python_tag_, Marker::kPythonTag, Stage::kJsonCalls);
        if (!config_.json_object) add(K::kLiteral, brace_, Marker::kCallsJson, Stage::kJsonCalls);
      }
      if (at_start_) add(K::kLiteral, think_start_, Marker::kThinkStart, Stage::kReasoning);
      if (leading) add(K::kLeadingNewline, newline_, Marker::kLeadingNewline, Stage::kCommon);
      // Before any reasoning closed, a `</think>` is the prompt's own (non-thinking prompts end
      // with it) written again: dropped, as DeepSeek's parser does. Once reasoning has closed,
      // the answer may quote the tag: then it is text.
      if (!reasoning_closed_) add(K::kLiteral, think_end_, Marker::kStrayThinkEnd, Stage::kCommon);
      break;
    case Stage::kReasoning:
      add_end_of_turn();
      if (tools) add(K::kNewlinesThen, dsml_open_, Marker::kDsmlOpen, Stage::kBlockOpen);
      if (at_start_) add(K::kLiteral, think_start_, Marker::kThinkStart, Stage::kReasoning);
      if (leading) add(K::kLeadingNewline, newline_, Marker::kLeadingNewline, Stage::kReasoning);
      add(K::kNewlinesThen, think_end_, Marker::kThinkEnd, Stage::kCommon);
      break;
    case Stage::kJson:
      for (size_t i = 0; i < stops_.size(); ++i)
        add(K::kLiteral, stops_[i], Marker::kStop, Stage::kFinished, i);
      add(K::kLiteral, fence_end_, Marker::kJsonFenceEnd, Stage::kMatchedJson);
      break;
    case Stage::kMatchedJson:
      if (tools) add(K::kNewlinesThen, dsml_open_, Marker::kDsmlOpen, Stage::kBlockOpen);
      break;
    case Stage::kBlockOpen:
      add(K::kLiteral, block_v4_, Marker::kBlockOpened, Stage::kToolCalls);
      add(K::kLiteral, block_v41_, Marker::kBlockOpened, Stage::kToolCalls);
      break;
    case Stage::kToolCalls:
      add(K::kLiteral, invoke_, Marker::kInvoke, Stage::kToolName);
      add(K::kLiteral, block_end_v4_, Marker::kBlockEnd, Stage::kFinished);
      add(K::kLiteral, block_end_v41_, Marker::kBlockEnd, Stage::kFinished);
      break;
    case Stage::kToolName:
      add(K::kLiteral, quote_, Marker::kNameEnd, Stage::kToolArgs);
      break;
    case Stage::kToolArgs:
      add(K::kLiteral, param_, Marker::kParamName, Stage::kParamName);
      add(K::kLiteral, dsml_close_, Marker::kArgsEnd, Stage::kToolCalls);
      break;
    case Stage::kParamName:
      add(K::kLiteral, quote_, Marker::kParamNameEnd, Stage::kParamType);
      break;
    case Stage::kParamType:
      add(K::kLiteral, type_true_, Marker::kTypeString, Stage::kParamValue);
      add(K::kLiteral, type_false_, Marker::kTypeJson, Stage::kParamValue);
      add(K::kLiteral, type_auto_, Marker::kTypeAuto, Stage::kParamValue);  // no string="…"
      break;
    case Stage::kParamValue:
      add(K::kLiteral, dsml_close_, Marker::kValueEnd, Stage::kToolArgs);
      break;
    case Stage::kCallBody:
      add_end_of_turn();
      add(K::kLiteral, call_close_, Marker::kCallClose, Stage::kCommon);
      break;
    case Stage::kJsonCalls:
      add_end_of_turn();
      break;
    case Stage::kFinished:
      break;
  }
}

void OutputStateMachine::feed(std::string_view bytes, Sink& sink) {
  for (char ch : bytes) feed_byte(static_cast<uint8_t>(ch), sink);
  size_t keep = 0;
  for (const Branch& b : branches_) keep = std::max(keep, b.matcher.partial());
  // kBlockOpen holds everything since `<｜DSML｜`: the tag is not decided until it completes.
  if (stage_ == Stage::kBlockOpen) keep = pending_.size();
  release(std::min(keep, pending_.size()), sink);
}

void OutputStateMachine::flush(Sink& sink) {
  if (stage_ == Stage::kBlockOpen) {
    // The output ended inside `<｜DSML｜…`: not a block after all.
    std::string rest = std::move(pending_);
    pending_.clear();
    sink.on_marker(Marker::kBlockOpenFailed, block_return_, {}, 0);
    enter(block_return_, false);
    for (char ch : rest) feed_byte(static_cast<uint8_t>(ch), sink);
  }
  release(0, sink);
}

void OutputStateMachine::release(size_t keep, Sink& sink) {
  if (pending_.size() <= keep) return;
  const size_t n = pending_.size() - keep;
  if (stage_ == Stage::kCommon || stage_ == Stage::kReasoning) at_start_ = false;
  sink.on_text(stage_, std::string_view(pending_).substr(0, n));
  pending_.erase(0, n);
}

void OutputStateMachine::feed_byte(uint8_t c, Sink& sink) {
  pending_.push_back(static_cast<char>(c));
  for (size_t i = 0; i < branches_.size(); ++i) {
    Branch& b = branches_[i];
    if (!b.matcher.feed(c)) continue;
    const size_t len = b.matcher.match_length();
    // `<think>` only counts as the very first thing in the output.
    // So do Llama's `<|python_tag|>` and `{` opening a message of calls.
    const bool at_start_only =
        b.marker == Marker::kThinkStart || b.marker == Marker::kPythonTag || b.marker == Marker::kCallsJson;
    if (at_start_only && (!at_start_ || pending_.size() != len)) continue;
    const Branch hit = b;
    const Stage from = stage_;
    if (pending_.size() > len) {
      release(len, sink);
    }
    if (hit.marker != Marker::kLeadingNewline) at_start_ = false;
    std::string matched = std::move(pending_);
    pending_.clear();
    sink.on_marker(hit.marker, from, matched, hit.stop_index);
    if (hit.marker == Marker::kDsmlOpen) block_return_ = from;
    if (hit.marker == Marker::kThinkEnd) reasoning_closed_ = true;
    // Leading-newline rules: reasoning and answer text drop newlines right after their start.
    const bool leading = hit.marker == Marker::kLeadingNewline || hit.marker == Marker::kThinkEnd ||
                         hit.marker == Marker::kThinkStart || hit.marker == Marker::kCallClose;
    enter(hit.next, leading);
    return;
  }
  if (stage_ == Stage::kBlockOpen) {
    bool possible = false;
    for (const Branch& b : branches_) possible |= b.matcher.partial() == pending_.size();
    if (!possible) {
      std::string rest = std::move(pending_);
      pending_.clear();
      sink.on_marker(Marker::kBlockOpenFailed, block_return_, {}, 0);
      enter(block_return_, false);
      for (char ch : rest) feed_byte(static_cast<uint8_t>(ch), sink);
    }
  }
}

}  // namespace di::recipe
