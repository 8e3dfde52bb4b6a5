// sqlock check NAME --max-age DUR [--json]: a monitoring plugin (Nagios,
// Icinga, Sensu, ...) for a job that `sqlock run` records: did it succeed
// recently enough? The plugin conventions win over sqlock's own for this
// command: exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (every failure, bad
// usage included), and the result is the first line on stdout.
#include <cmath>
#include <cstdio>

#include "commands/commands.hpp"
#include "common/command_line.hpp"
#include "common/database.hpp"
#include "common/exit_codes.hpp"
#include "common/local_windows.hpp"
#include "common/lock_format.hpp"
#include "common/option_values.hpp"
#include "sqlock/pauses.hpp"
#include "sqlock/run_history.hpp"

namespace sqlock_cli {
namespace {

const char* const check_usage = "NAME --max-age DUR [--json]";

const char* const check_details =
    "A monitoring plugin (Nagios, Icinga, Sensu): looks at the runs `sqlock run` recorded\n"
    "for NAME and prints one line, e.g.\n"
    "  SQLOCK OK - backup: last success 2026-11-22 03:00:12 UTC (5h ago), took 42s | "
    "age=18000s;;86400 duration=42s\n"
    "Exit status (the plugin convention, not sqlock's usual codes):\n"
    "  0 OK        a run succeeded within --max-age, and no later run failed\n"
    "  1 WARNING   a run succeeded within --max-age, but the last run failed, was killed,\n"
    "              was lost or timed out (run --max-runtime); or the job is paused\n"
    "              (sqlock pause); or it was skipped since because a job it runs after\n"
    "              (run --after) did not succeed last\n"
    "  2 CRITICAL  no run succeeded within --max-age (or none is recorded)\n"
    "  3 UNKNOWN   the database cannot be read, there is no history table, bad usage\n"
    "A job retried with `run --retry` has a run per attempt: its last attempt is its\n"
    "last run, and the line names the attempt when it was not the first.\n"
    "A run in progress is mentioned but changes nothing. The age counts from the end of\n"
    "the last success, by the database's clock. Times are UTC, or in --tz ZONE (or\n"
    "SQLOCK_TZ). With --json: one JSON object with the\n"
    "same facts.\n"
    "\n"
    "Example (Icinga/Nagios command line):\n"
    "  sqlock check nightly-backup --max-age 25h\n";

void add_check_options(cxxopts::Options& options, const std::string& group) {
    auto add = options.add_options(group);
    add("max-age", "CRITICAL unless a run succeeded within DUR (e.g. 25h) (required)",
        cxxopts::value<std::string>(), "DUR");
    add("json", "Print one JSON object instead of the plugin's line");
    add("tz", "Write times in time zone ZONE (e.g. Europe/Berlin); default $SQLOCK_TZ, else UTC",
        cxxopts::value<std::string>(), "ZONE");
}

constexpr int plugin_ok = 0, plugin_warning = 1, plugin_critical = 2, plugin_unknown = 3;
const char* const state_names[] = {"OK", "WARNING", "CRITICAL", "UNKNOWN"};

// "5h", "3m12s", "0s": an age or duration in whole seconds, for people.
std::string whole_seconds(double seconds) {
    const auto s = static_cast<std::int64_t>(std::llround(std::max(seconds, 0.0)));
    return s == 0 ? "0s" : sqlock::format_duration(sqlock::duration(s * 1000));
}

// "2026-11-22 03:00:12 UTC" from the databases' text; with a zone (--tz),
// "2026-11-22 04:00:12 CET".
std::string shown_time(const std::string& text, const date::time_zone* zone) {
    return zone ? local_text(zone, text) : text.substr(0, 19) + " UTC";
}

// "failed (exit 3)", "was killed (SIGKILL)", "was lost", "timed out (...)".
std::string ending_phrase(const sqlock::RunRecord& run) {
    switch (run.outcome) {
        case sqlock::run_outcome::failed:
            return "failed (" + status_text(run) + ")";
        case sqlock::run_outcome::killed:
            return "was killed (" + status_text(run) + ")";
        case sqlock::run_outcome::lost:
            return "was lost (its holder died, hung or lost its lock)";
        case sqlock::run_outcome::timed_out:
            return "timed out (stopped at its --max-runtime, " + status_text(run) + ")";
        default:
            return sqlock::to_string(run.outcome);
    }
}

// " (attempt 3)" for a run that was a retry (`run --retry`), else "".
std::string attempt_text(const sqlock::RunRecord& run) {
    return run.attempt > 1 ? " (attempt " + std::to_string(run.attempt) + ")" : std::string();
}

// The performance data after "|": age of the last success against the
// critical threshold, and the last finished run's duration.
std::string performance_data(const sqlock::JobStatus& status, double max_age_seconds) {
    char buf[128];
    std::string out;
    if (status.success_age_seconds) {
        std::snprintf(buf, sizeof buf, "age=%.0fs;;%.0f",
                      std::max(*status.success_age_seconds, 0.0), max_age_seconds);
        out += buf;
    }
    if (status.last_finished && status.last_finished->duration_seconds) {
        std::snprintf(buf, sizeof buf, "%sduration=%.3fs", out.empty() ? "" : " ",
                      *status.last_finished->duration_seconds);
        out += buf;
    }
    return out.empty() ? out : " | " + out;
}

struct Verdict {
    int state = plugin_unknown;
    std::string text;  // after "NAME: ", without performance data
};

// `max_age_text` is --max-age as given ("25h" stays "25h").
Verdict judge(const sqlock::JobStatus& status, const std::optional<sqlock::PauseInfo>& pause,
              sqlock::duration max_age, const std::string& max_age_text,
              const date::time_zone* zone) {
    const auto utc_seconds = [zone](const std::string& text) { return shown_time(text, zone); };
    const double max_age_seconds = static_cast<double>(max_age.count()) / 1000.0;
    const auto& success = status.last_success;
    const bool recent =
        success && status.success_age_seconds && *status.success_age_seconds <= max_age_seconds;
    const auto& last = status.last_finished;
    // The newest finished run is newer than the last success and did not succeed.
    const bool last_failed = last && last->outcome != sqlock::run_outcome::succeeded &&
                             (!success || last->id != success->id);

    std::string success_text =
        success ? "last success " + utc_seconds(success->ended.value_or(success->started)) + " (" +
                      whole_seconds(status.success_age_seconds.value_or(0)) + " ago), took " +
                      seconds_text(success->duration_seconds) + attempt_text(*success)
                : std::string("no successful run recorded");
    std::string failure_text = last_failed ? "last run " + ending_phrase(*last) + " at " +
                                                 utc_seconds(last->ended.value_or(last->started)) +
                                                 attempt_text(*last)
                                           : std::string();

    Verdict v;
    if (!recent) {
        v.state = plugin_critical;
        v.text = "no successful run within " + max_age_text;
        if (success) v.text += "; " + success_text;
        if (last_failed) v.text += "; " + failure_text;
        if (!success && !last && !status.running) v.text += " (no run recorded)";
    } else if (last_failed) {
        v.state = plugin_warning;
        v.text = failure_text + "; " + success_text;
    } else {
        v.state = plugin_ok;
        v.text = success_text;
    }
    // Skipped by `run --after` since its last run: a predecessor that
    // failed blocks the chain until someone looks (WARNING, as a failure
    // of its own); one still pending changes nothing, as a run in progress.
    if (status.skipped && status.skipped->outcome == sqlock::run_outcome::after_failed) {
        if (v.state == plugin_ok) v.state = plugin_warning;
        v.text = "blocked: skipped at " + utc_seconds(status.skipped->started) +
                 " because a job it runs after (--after) did not succeed last; " + v.text;
    } else if (status.skipped) {
        v.text += "; skipped at " + utc_seconds(status.skipped->started) +
                  ", waiting for a job it runs after (--after)";
    }
    // A paused job is not run anywhere: someone should know, but a pause
    // is deliberate, so WARNING (an older success still decides CRITICAL).
    if (pause) {
        if (v.state == plugin_ok) v.state = plugin_warning;
        v.text = describe_pause(*pause) + "; " + v.text;
    }

    // A run in progress neither helps nor hurts: it is only reported.
    if (status.running)
        v.text += "; running since " + utc_seconds(status.running->started) + " on " +
                  sqlock::text::printable(status.running->host) + " (pid " +
                  std::to_string(status.running->pid) + ")";
    return v;
}

// The first line: "SQLOCK STATE - text". A '|' starts the performance data
// for the monitoring system, so one in the text (a name) is escaped as
// text::printable escapes bytes.
std::string plugin_line(int state, const std::string& text) {
    std::string shown;
    for (char c : one_line(text)) shown += c == '|' ? std::string("\\x7c") : std::string(1, c);
    return std::string("SQLOCK ") + state_names[state] + " - " + shown;
}

int report_check_failure(const std::string& message, bool json) {
    if (json)
        Output::data(json_text({{"status", state_names[plugin_unknown]},
                                {"exit_code", plugin_unknown},
                                {"message", plugin_line(plugin_unknown, message)}},
                               true));
    else
        Output::data(plugin_line(plugin_unknown, message));
    return plugin_unknown;
}

int run_check(Invocation& inv) {
    if (inv.args.size() != 1)
        throw usage_error("check takes one lock name; " + usage_line("check", check_usage));
    if (!inv.options.count("max-age"))
        throw usage_error("check needs --max-age DUR; " + usage_line("check", check_usage));
    const sqlock::duration max_age =
        duration_option(inv.options, "max-age", duration_kind::positive);
    const std::string& name = inv.args[0];
    const date::time_zone* zone =
        zone_setting(inv.options.count("tz") > 0, string_option(inv.options, "tz"));
    sqlock::Locker locker = open_locker(inv.global);
    const sqlock::JobStatus status = sqlock::RunHistory(locker).job_status(name);
    const std::optional<sqlock::PauseInfo> pause = sqlock::Pauses(locker).find(name);
    const Verdict v = judge(status, pause, max_age, inv.options["max-age"].as<std::string>(), zone);
    const std::string line = plugin_line(v.state, sqlock::text::printable(name) + ": " + v.text) +
                             performance_data(status, static_cast<double>(max_age.count()) / 1000);

    if (inv.options.count("json")) {
        auto run_or_null = [](const std::optional<sqlock::RunRecord>& run) {
            return run ? run_json(*run) : nlohmann::ordered_json(nullptr);
        };
        nlohmann::ordered_json age = nullptr;
        if (status.success_age_seconds) age = *status.success_age_seconds;
        Output::data(
            json_text({{"status", state_names[v.state]},
                       {"exit_code", v.state},
                       {"message", line},
                       {"name", name},
                       {"max_age_seconds", static_cast<double>(max_age.count()) / 1000},
                       {"now", status.now},
                       {"last_success", run_or_null(status.last_success)},
                       {"last_success_age_seconds", age},
                       {"last_finished", run_or_null(status.last_finished)},
                       {"running", run_or_null(status.running)},
                       {"skipped", run_or_null(status.skipped)},
                       {"paused", pause ? pause_json(*pause) : nlohmann::ordered_json(nullptr)}},
                      true));
    } else {
        Output::data(line);
    }
    return v.state;
}

}  // namespace

Command check_command() {
    return {"check",
            check_usage,
            "monitoring plugin: did NAME's last run succeed within DUR? (exit 0-3)",
            check_details,
            add_check_options,
            run_check,
            false,
            report_check_failure};
}

}  // namespace sqlock_cli
