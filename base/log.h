// The engine's log: leveled records (error, warn, info, debug) for what a user of vLLM or
// llama.cpp expects to see while a model loads (config, weights, caches, device, ready). One
// process-wide sink: stderr by default, or a function an embedder installs (di_log_set). Knows
// nothing of what is logged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace di::log {

enum class Level : int { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

// Receives one record: no trailing newline, valid for the call only.
using SinkFn = void (*)(void* user_data, int32_t level, const char* message, size_t len);

// Installs `fn` (nullptr: stderr) and the most verbose level delivered. Records are delivered
// one at a time (never concurrently), on the thread that logs them.
void set_sink(SinkFn fn, void* user_data, Level max_level);
bool enabled(Level level);
void write(Level level, std::string_view message);

std::optional<Level> parse_level(std::string_view name);  // "error", "warn", "info", "debug"
const char* level_name(Level level);

// printf-style; formats only when the level is enabled.
void error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void warn(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void info(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void debug(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// A progress bar on the terminal (base/progress_meter.h draws it). Available when stderr is a
// terminal, no handler is installed and info records are enabled; otherwise progress goes out as
// info records. write_progress_bar replaces the terminal's current line with `bar` (no
// newline); a record written while a bar is open first ends the bar's line, so neither is lost.
bool progress_bar_available();
void write_progress_bar(std::string_view bar);
void end_progress_bar();  // ends an open bar's line; nothing when none is open

// "1.23 GiB", "512 KiB", "17 B".
std::string format_bytes(double bytes);

}  // namespace di::log
