#include "common/lock_format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>

#include "common/output.hpp"
#include "common/signal_name.hpp"
#include "sqlock/duration.hpp"

namespace sqlock_cli {
namespace {

std::string seconds_text(double seconds) {
    auto ms = static_cast<std::int64_t>(std::ceil(seconds)) * 1000;
    return sqlock::format_duration(sqlock::duration(ms));
}

// "YYYY-MM-DD HH:MM:SS" of the database's "YYYY-MM-DD HH:MM:SS.mmm".
std::string to_seconds(const std::string& time) {
    return time.substr(0, 19);
}

std::string or_dash(const std::string& s) {
    return s.empty() ? "-" : sqlock::text::printable(s);
}

}  // namespace

// Rows of cells as text, columns two spaces apart. Columns line up by
// display width, not bytes: "café" is 5 bytes wide in memory and 4 on the
// screen.
std::string aligned_columns(const std::vector<std::vector<std::string>>& cells) {
    std::vector<std::size_t> width(cells.front().size(), 0);
    for (const auto& line : cells)
        for (std::size_t i = 0; i < line.size(); ++i)
            width[i] = std::max(width[i], display_width(line[i]));
    std::string out;
    for (const auto& line : cells) {
        std::string text;
        for (std::size_t i = 0; i < line.size(); ++i) {
            text += line[i];
            if (i + 1 < line.size())
                text += std::string(width[i] - display_width(line[i]) + 2, ' ');
        }
        if (!out.empty()) out += "\n";
        out += text;
    }
    return out;
}

namespace {

// A string from the row's "meta" object (set by `sqlock run`), or "".
std::string meta_field(const sqlock::LockInfo& info, const char* key) {
    auto j = nlohmann::json::parse(info.locked_by, nullptr, /*allow_exceptions=*/false);
    if (j.is_object()) {
        auto meta = j.find("meta");
        if (meta != j.end() && meta->is_object()) {
            auto value = meta->find(key);
            if (value != meta->end() && value->is_string()) return value->get<std::string>();
        }
    }
    return {};
}

}  // namespace

std::string holder_label(const sqlock::LockInfo& info) {
    return meta_field(info, "label");
}

std::string holder_command(const sqlock::LockInfo& info) {
    std::string command = meta_field(info, "command");
    return command.empty() ? info.holder.program : command;
}

std::string holder_job(const sqlock::LockInfo& info) {
    std::string label = holder_label(info);
    return label.empty() ? holder_command(info) : label;
}

std::string time_left(const sqlock::LockInfo& info) {
    return info.expired() ? "-" : seconds_text(info.seconds_left);
}

std::string expiry_phrase(const sqlock::LockInfo& info) {
    if (info.expired()) return "expired " + seconds_text(-info.seconds_left) + " ago";
    return "expires in " + seconds_text(info.seconds_left);
}

std::string holder_sentence(const sqlock::LockInfo& info) {
    if (sqlock::kept_by_min_hold(info))
        return "lock " + in_quotes(info.name) + " is kept by the minimum hold of " +
               describe_holder(info) + ", whose job finished, until " + to_seconds(info.expires) +
               " UTC (" + expiry_phrase(info) + ")";
    return "lock " + in_quotes(info.name) + " is held by " + describe_holder(info) + ", " +
           expiry_phrase(info) + " (" + to_seconds(info.expires) + " UTC)";
}

std::string state_word(const sqlock::LockInfo& info) {
    if (info.expired()) return "expired";
    return sqlock::kept_by_min_hold(info) ? "kept" : "held";
}

std::string pid_text(const sqlock::LockInfo& info) {
    if (!info.holder.pid) return "-";
    return std::to_string(info.holder.pid) + (sqlock::holder_process_gone(info) ? " (gone)" : "");
}

nlohmann::ordered_json lock_json(const sqlock::LockInfo& info) {
    return {
        {"name", info.name},
        {"id", info.id},
        {"created", info.created},
        {"expires", info.expires},
        {"seconds_left", info.seconds_left},
        {"expired", info.expired()},
        {"holder",
         {{"host", info.holder.host},
          {"pid", info.holder.pid},
          {"user", info.holder.user},
          {"program", info.holder.program},
          {"command", holder_command(info)},
          {"label", holder_label(info)}}},
        {"locked_by", info.locked_by},
    };
}

std::string json_text(const nlohmann::ordered_json& json, bool pretty) {
    return json.dump(pretty ? 2 : -1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string lock_table(const std::vector<sqlock::LockInfo>& rows) {
    std::vector<std::vector<std::string>> cells;
    cells.push_back({"NAME", "ID", "HOST", "PID", "USER", "COMMAND", "CREATED (UTC)",
                     "EXPIRES (UTC)", "LEFT", "STATE"});
    for (const auto& r : rows) {
        cells.push_back({sqlock::text::printable(r.name), std::to_string(r.id),
                         or_dash(r.holder.host), pid_text(r), or_dash(r.holder.user),
                         or_dash(holder_job(r)), to_seconds(r.created), to_seconds(r.expires),
                         time_left(r), state_word(r)});
    }
    return aligned_columns(cells);
}

std::string describe_pause(const sqlock::PauseInfo& p) {
    std::string text = "job " + in_quotes(p.name) + " is paused by " +
                       sqlock::text::printable(p.paused_by, 255) + " since " + p.created + " UTC";
    text += p.until ? " until " + *p.until + " UTC" : std::string(" until resumed");
    if (!p.reason.empty()) text += ": " + one_line(sqlock::text::printable(p.reason, 1024));
    return text;
}

nlohmann::ordered_json pause_json(const sqlock::PauseInfo& p) {
    return {
        {"name", p.name},
        {"paused_by", p.paused_by},
        {"reason", p.reason},
        {"created", p.created},
        {"until", p.until ? nlohmann::ordered_json(*p.until) : nlohmann::ordered_json(nullptr)},
    };
}

std::string pause_table(const std::vector<sqlock::PauseInfo>& pauses) {
    std::vector<std::vector<std::string>> cells;
    cells.push_back({"PAUSED", "BY", "SINCE (UTC)", "UNTIL (UTC)", "REASON"});
    for (const auto& p : pauses)
        cells.push_back({sqlock::text::printable(p.name), sqlock::text::printable(p.paused_by),
                         to_seconds(p.created), p.until ? to_seconds(*p.until) : "-",
                         p.reason.empty() ? "-" : one_line(sqlock::text::printable(p.reason, 80))});
    return aligned_columns(cells);
}

std::string lock_details(const sqlock::LockInfo& info) {
    std::string out;
    auto field = [&out](const char* name, const std::string& value) {
        std::string label = std::string(name) + ":";
        label.resize(10, ' ');
        if (!out.empty()) out += "\n";
        out += label + value;
    };
    field("name", sqlock::text::printable(info.name));
    field("id", std::to_string(info.id));
    field("state", sqlock::kept_by_min_hold(info) ? "kept (by the minimum hold: the job finished)"
                                                  : state_word(info));
    field("holder", describe_holder(info));
    field("host", or_dash(info.holder.host));
    field("pid", pid_text(info));
    field("user", or_dash(info.holder.user));
    field("program", or_dash(info.holder.program));
    field("command", or_dash(holder_command(info)));
    if (!holder_label(info).empty()) field("label", sqlock::text::printable(holder_label(info)));
    field("created", info.created + " UTC");
    field("expires", info.expires + " UTC");
    field("left", info.expired() ? expiry_phrase(info) : time_left(info));
    if (info.holder.host.empty() && info.holder.pid == 0)
        field("locked_by", sqlock::text::printable(info.locked_by));  // written by another program
    return out;
}

sqlock::error not_held_by_anyone(const std::string& name, const std::string& db) {
    return sqlock::error(sqlock::errc::lost,
                         "lock " + in_quotes(name) +
                             " is not held by anyone: its lease ran out and it was reaped or "
                             "taken over and released, or it was never taken" +
                             db);
}

namespace {

template <typename T>
nlohmann::ordered_json or_null(const std::optional<T>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

}  // namespace

nlohmann::ordered_json run_json(const sqlock::RunRecord& run) {
    return {{"id", run.id},
            {"name", run.name},
            {"window_start", or_null(run.window_start)},
            {"host", run.host},
            {"pid", run.pid},
            {"user", run.user},
            {"program", run.program},
            {"fencing_id", run.fencing_id},
            {"attempt", run.attempt},
            {"started", run.started},
            {"ended", or_null(run.ended)},
            {"outcome", sqlock::to_string(run.outcome)},
            {"exit_status", or_null(run.exit_status)},
            {"signal", or_null(run.signal)},
            {"duration_seconds", or_null(run.duration_seconds)}};
}

std::string seconds_text(const std::optional<double>& seconds) {
    if (!seconds) return "-";
    char buf[32];
    if (*seconds < 1) {
        std::snprintf(buf, sizeof buf, "%.0fms", *seconds * 1000);
        return buf;
    }
    if (*seconds < 60) {
        std::snprintf(buf, sizeof buf, "%.1fs", *seconds);
        return buf;
    }
    return sqlock::format_duration(sqlock::duration(static_cast<std::int64_t>(*seconds) * 1000));
}

std::string status_text(const sqlock::RunRecord& run) {
    if (run.signal) return signal_name(*run.signal);
    if (run.exit_status) return "exit " + std::to_string(*run.exit_status);
    return "-";
}

}  // namespace sqlock_cli
