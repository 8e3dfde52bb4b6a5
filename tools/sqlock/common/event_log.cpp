#include "common/event_log.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "common/exit_codes.hpp"
#include "common/lock_format.hpp"
#include "common/option_values.hpp"

namespace sqlock_cli {
namespace {

const char* level_name(event_level level) {
    switch (level) {
        case event_level::info:
            return "info";
        case event_level::notice:
            return "notice";
        case event_level::warning:
            return "warning";
        case event_level::error:
            return "error";
    }
    return "info";
}

// "2026-11-22T23:04:05.678Z": RFC 3339 in UTC, what journald's and most
// shippers' parsers take without configuration.
std::string now_utc() {
    using namespace std::chrono;
    const auto now = system_clock::now();
    const std::time_t secs = system_clock::to_time_t(now);
    const auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char text[64];
    std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<int>(ms));
    return text;
}

log_format parse_format(const std::string& text, const std::string& where) {
    if (text == "text") return log_format::text;
    if (text == "json") return log_format::json;
    throw usage_error(where + " must be text or json, got " + in_quotes(text));
}

}  // namespace

log_format log_format_option(const cxxopts::ParseResult& result) {
    if (result.count("log-format"))
        return parse_format(string_option(result, "log-format"), "--log-format");
    if (const char* env = std::getenv("SQLOCK_LOG_FORMAT"); env && *env)
        return parse_format(env, "SQLOCK_LOG_FORMAT");
    return log_format::text;
}

void write_event_line(event_level level, const std::string& event, const std::string& message,
                      const nlohmann::ordered_json& fields) {
    nlohmann::ordered_json line = {{"time", now_utc()},
                                   {"level", level_name(level)},
                                   {"event", event},
                                   {"message", one_line(message)}};
    for (const auto& [key, value] : fields.items()) line[key] = value;
    // stdout may hold buffered results; keep the order a reader expects.
    std::fflush(stdout);
    write_all(STDERR_FILENO, json_text(line, false) + "\n");
}

EventLog::EventLog(const Output& out, log_format format, nlohmann::ordered_json context)
    : out_(out), format_(format), context_(std::move(context)) {
    if (format_ != log_format::json) return;
    Output::redirect([this](Output::line_kind kind, const std::string& message) {
        const event_level level = kind == Output::line_kind::error    ? event_level::error
                                  : kind == Output::line_kind::detail ? event_level::info
                                                                      : event_level::notice;
        write_event_line(level, "message", message, context_);
    });
}

EventLog::~EventLog() {
    if (format_ == log_format::json) Output::redirect({});
}

void EventLog::event(event_level level, const std::string& event, const std::string& message,
                     nlohmann::ordered_json fields) const {
    if (format_ == log_format::text) {
        switch (level) {
            case event_level::info:
            case event_level::warning:
                out_.detail(message);
                return;
            case event_level::notice:
                out_.note(message);
                return;
            case event_level::error:
                Output::error(message);
                return;
        }
        return;
    }
    if (out_.quiet() && (level == event_level::info || level == event_level::notice)) return;
    for (const auto& [key, value] : context_.items())
        if (!fields.contains(key)) fields[key] = value;
    write_event_line(level, event, message, fields);
}

void EventLog::add_context(const std::string& key, nlohmann::ordered_json value) {
    context_[key] = std::move(value);
}

cli_error EventLog::ending(event_level level, const std::string& name, int code,
                           const std::string& message, nlohmann::ordered_json fields,
                           bool quiet_ok) const {
    if (format_ == log_format::text || message.empty()) return cli_error(code, message, quiet_ok);
    fields["exit_code"] = code;
    event(level, name, message, std::move(fields));
    return cli_error(code, "", quiet_ok);
}

double seconds_value(std::chrono::milliseconds d) {
    return static_cast<double>(d.count()) / 1000.0;
}

}  // namespace sqlock_cli
