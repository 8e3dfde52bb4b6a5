// What `sqlock run` tells about the lock and the job as it goes: "sqlock: "
// lines for people (the default), or, with --log-format json (or
// SQLOCK_LOG_FORMAT=json), one JSON object per event on stderr for journald
// or a log shipper. docs/logging.md lists the events and their fields.
#pragma once

#include <cxxopts.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "common/exit_codes.hpp"
#include "common/output.hpp"

namespace sqlock_cli {

enum class log_format { text, json };

/// --log-format, else $SQLOCK_LOG_FORMAT, else text. Throws cli_error (64)
/// for any other value, naming where it came from.
log_format log_format_option(const cxxopts::ParseResult& result);

/// How much an event matters. In text: info only with --verbose, notice
/// unless --quiet, warning only with --verbose (a near miss that went
/// well), error always. In JSON every event is written, except info and
/// notice under --quiet.
enum class event_level { info, notice, warning, error };

/// One event as a JSON line on stderr, written with a single write():
/// {"time", "level", "event", "message", then `fields` in their order}.
/// `time` is this host's clock (UTC, milliseconds); times inside `fields`
/// come from the database's.
void write_event_line(event_level level, const std::string& event, const std::string& message,
                      const nlohmann::ordered_json& fields = nlohmann::ordered_json::object());

/// EventLog
///
/// The events of one `run`, in either format. Every JSON event carries the
/// context (the lock name, this host, sqlock's pid, the database's
/// redacted URL) after its own fields. Safe to call from several threads
/// (a heartbeat's handler calls it); no state changes after construction.
/// In JSON, while it lives, every other line Output writes becomes an event
/// "message" (see Output::redirect): stderr holds nothing but JSON.
class EventLog {
  public:
    EventLog(const Output& out, log_format format, nlohmann::ordered_json context);
    ~EventLog();
    EventLog(const EventLog&) = delete;
    EventLog& operator=(const EventLog&) = delete;

    bool json() const noexcept { return format_ == log_format::json; }

    /// Adds `key` to the context (before any thread that logs starts).
    void add_context(const std::string& key, nlohmann::ordered_json value);

    /// Writes the event: in text `message` as a "sqlock: " line (as the
    /// level says), in JSON an object with `fields` and the context.
    void event(event_level level, const std::string& event, const std::string& message,
               nlohmann::ordered_json fields = nlohmann::ordered_json::object()) const;

    /// How `run` ends with `code` (not 0) for the reason `message` says:
    /// returns the cli_error to throw. In text that error carries the
    /// message, which main prints; in JSON the event is written here (with
    /// "exit_code") and the error has no message left to print.
    /// `quiet_ok`: an expected outcome that --quiet silences (lock busy).
    cli_error ending(event_level level, const std::string& event, int code,
                     const std::string& message,
                     nlohmann::ordered_json fields = nlohmann::ordered_json::object(),
                     bool quiet_ok = false) const;

  private:
    Output out_;
    log_format format_;
    nlohmann::ordered_json context_;
};

/// Seconds as a JSON number with millisecond precision (lease_seconds...).
double seconds_value(std::chrono::milliseconds d);

}  // namespace sqlock_cli
