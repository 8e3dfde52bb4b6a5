#include "run/run_settings.hpp"

#include <algorithm>
#include <chrono>

#include "common/local_windows.hpp"
#include "common/lock_format.hpp"
#include "common/option_values.hpp"
#include "text.hpp"

namespace sqlock_cli {

void add_job_options(cxxopts::Options& options, const std::string& group,
                     const std::string& run_only) {
    auto add = options.add_options(group);
    auto add_run_only = options.add_options(run_only);
    add("expires", "Lease: the lock stops counting this long after it was taken or last renewed",
        cxxopts::value<std::string>()->default_value("1h"), "DUR");
    add_wait_options(add, "skips at once");
    add_run_only("slots",
                 "Counting semaphore: take one of N slots of NAME (at most N runs at once)",
                 cxxopts::value<std::string>(), "N");
    add_run_only(
        "shared",
        "Take NAME shared: run beside other --shared runs of NAME, never beside an exclusive one");
    add("min-hold", "Keep the lock at least DUR after it was taken, even if COMMAND ends sooner",
        cxxopts::value<std::string>()->default_value("0"), "DUR");
    add("heartbeat", "Renew the lease while COMMAND runs (the default)");
    add("no-heartbeat", "Do not renew: the lock ends after --expires even if COMMAND still runs");
    add("on-lost",
        "If the lock is lost or cannot be renewed while the job runs: term (stop it, exit 79) "
        "or ignore",
        cxxopts::value<std::string>()->default_value("term"), "ACTION");
    add("label", "What `list` shows for this job instead of the program's name (e.g. for sh -c)",
        cxxopts::value<std::string>(), "TEXT");
    add("max-runtime",
        "Stop the job (SIGTERM, --kill-grace, SIGKILL) DUR after it started and exit 124; "
        "independent of the lease",
        cxxopts::value<std::string>(), "DUR");
    add("kill-grace",
        "Time between SIGTERM and SIGKILL when the job must stop (default: 10s, or less so "
        "that it fits half the lease)",
        cxxopts::value<std::string>(), "DUR");
    add("E,conflict-exit-code", "Exit code when the lock is busy or --wait runs out (default 75)",
        cxxopts::value<std::string>(), "N");
    add_run_only("once-per",
                 "Run COMMAND at most once per window of DUR (UTC, database clock); exit 0 if this "
                 "window's run already succeeded",
                 cxxopts::value<std::string>(), "DUR");
    add_run_only("once-per-offset",
                 "Shift the --once-per windows' start by DUR (less than the window)",
                 cxxopts::value<std::string>(), "DUR");
    add_run_only("once-per-any-outcome",
                 "With --once-per: a run that failed, was killed or lost also counts as done");
    add("no-history", "Do not record this run in the run history (`sqlock history`)");
    add("log-format",
        "How run reports on stderr: text (lines for people, the default) or json (one object "
        "per event, for journald or a log shipper); default $SQLOCK_LOG_FORMAT",
        cxxopts::value<std::string>(), "FORMAT");
}

namespace {

using std::chrono::milliseconds;

// What `run` stores in the row's metadata: the program it runs, so `list`
// can show it. Only argv[0]: arguments may hold secrets, and the lock table
// is readable from every host that uses it.
std::string command_label(const std::string& argv0) {
    // Stored as it is, but for bytes that are not UTF-8 (U+FFFD instead):
    // the row's JSON must be valid UTF-8. Control characters stay, to be
    // escaped once, where it is shown (text::printable), not twice.
    // At most 200 bytes as the row's JSON writes them (a control character
    // takes six, \u00XX), so that the owner text stays within its limit.
    std::string label;
    std::size_t json_bytes = 0;
    for (std::size_t i = 0; i < argv0.size();) {
        const std::size_t n = sqlock::text::utf8_sequence_length(argv0, i);
        const std::string piece = n == 0 ? std::string("\xEF\xBF\xBD") : argv0.substr(i, n);
        const unsigned char c = static_cast<unsigned char>(piece[0]);
        const std::size_t cost = c < 0x20 ? 6 : (c == '"' || c == '\\') ? 2 : piece.size();
        if (json_bytes + cost > 200) return label + "...";
        label += piece;
        json_bytes += cost;
        i += n == 0 ? 1 : n;
    }
    return label;
}

// The margin by which the job must have ended before the lease could run
// out: covers SIGKILL taking effect, our own scheduling, and clocks whose
// rates differ slightly. A twentieth of the lease, 200 ms to 5 s.
milliseconds fence_margin(sqlock::duration lease) {
    return std::clamp<milliseconds>(std::chrono::duration_cast<milliseconds>(lease / 20),
                                    milliseconds(200), milliseconds(5000));
}

// SIGTERM goes out grace + margin before the lease could run out; at least
// half the lease stays for renewals before that (several attempts, see the
// library's heartbeat). A --kill-grace that does not fit is a usage error
// that says what would.
void fit_grace(const cxxopts::ParseResult& o, RunSettings& s) {
    const auto lease = std::chrono::duration_cast<milliseconds>(s.request.options.expires);
    s.margin = fence_margin(s.request.options.expires);
    // Fenced (a heartbeat, --on-lost=term): a lease under two margins would
    // have the job stopped as soon as it started, "the database did not
    // answer in time" though it did.
    if (s.request.options.heartbeat && s.terminate_on_lost && lease / 2 < s.margin)
        throw usage_error("--expires " + sqlock::format_duration(lease) +
                          " is too short for run: the job is stopped a margin of " +
                          sqlock::format_duration(s.margin) +
                          " before the lease could run out, and half the lease must remain for "
                          "renewals; use --expires " +
                          sqlock::format_duration(2 * s.margin) + " or more");
    const milliseconds room = std::max(lease / 2 - s.margin, milliseconds(0));
    if (!o.count("kill-grace")) {
        s.grace = std::min(milliseconds(10000), room);
        return;
    }
    s.grace = std::chrono::duration_cast<milliseconds>(
        duration_option(o, "kill-grace", duration_kind::non_negative));
    if (s.grace > room)
        throw usage_error("--kill-grace " + sqlock::format_duration(s.grace) + " does not fit a " +
                          sqlock::format_duration(lease) +
                          " lease: the job gets SIGTERM the grace plus a margin of " +
                          sqlock::format_duration(s.margin) +
                          " before the lease could run out, and half the lease must remain "
                          "for renewals; use --kill-grace " +
                          sqlock::format_duration(room) + " or less, or a longer --expires");
}

}  // namespace

RunSettings parse_run_settings(const Invocation& inv, const std::string& command,
                               const std::string& usage) {
    const auto& o = inv.options;
    if (inv.args.empty()) throw usage_error(command + " needs a lock name; " + usage);
    if (!inv.has_separator || inv.exec_argv.empty())
        throw usage_error(command + " needs a command after `--`; " + usage);
    if (o.count("heartbeat") && o.count("no-heartbeat"))
        throw usage_error("--heartbeat and --no-heartbeat contradict each other");

    RunSettings s;
    s.command = inv.exec_argv;
    s.request.name = inv.args[0];
    s.request.slots = static_cast<int>(integer_option(o, "slots", 1, 10000, 0));
    if (inv.args.size() > 1) {
        // Several names: one set, all or nothing.
        check_set_names(inv.args, usage);
        if (s.request.slots)
            throw usage_error("--slots takes one semaphore name, got " +
                              std::to_string(inv.args.size()) + " names");
        if (o.count("once-per"))
            throw usage_error("--once-per takes one lock name, got " +
                              std::to_string(inv.args.size()) + " names");
        s.request.set = inv.args;
    }
    apply_shared_option(o, s.request);
    if (s.request.options.mode == sqlock::lock_mode::shared && o.count("once-per"))
        throw usage_error("--once-per runs one job per window; it does not go with --shared");
    const WaitOption wait = wait_option(o);
    s.request.wait = wait.wait;
    s.request.wait_forever = wait.forever;
    s.request.options.queue_lease = wait.queue_lease;
    s.request.options.expires = duration_option(o, "expires", duration_kind::positive);
    s.request.options.min_hold = duration_option(o, "min-hold", duration_kind::non_negative);
    // Said here in the command's words (the library names its fields).
    if (s.request.options.min_hold > s.request.options.expires)
        throw usage_error("--min-hold " + sqlock::format_duration(s.request.options.min_hold) +
                          " is longer than --expires " +
                          sqlock::format_duration(s.request.options.expires) +
                          ": the lock would end before its minimum hold");
    s.request.options.heartbeat = o.count("no-heartbeat") == 0;
    s.program = command_label(s.command.front());
    s.request.options.metadata["command"] = s.program;
    if (o.count("label"))
        s.request.options.metadata["label"] = command_label(string_option(o, "label"));
    std::string on_lost = string_option(o, "on-lost", "term");
    if (on_lost != "term" && on_lost != "ignore")
        throw usage_error("--on-lost must be term or ignore, got " + in_quotes(on_lost));
    s.terminate_on_lost = on_lost == "term";
    s.conflict_code =
        static_cast<int>(integer_option(o, "conflict-exit-code", 0, 255, exit_code::busy));
    fit_grace(o, s);
    // Any length: the heartbeat renews the lease for as long as it allows.
    if (o.count("max-runtime"))
        s.max_runtime = std::chrono::duration_cast<milliseconds>(
            duration_option(o, "max-runtime", duration_kind::positive));
    s.history = o.count("no-history") == 0;
    if (o.count("once-per")) {
        s.once_per = duration_option(o, "once-per", duration_kind::positive);
        if (!s.history)
            throw usage_error(
                "--once-per needs the run history to know what ran; drop --no-history");
        if (s.request.slots > 0)
            throw usage_error("--once-per runs one job per window; it does not go with --slots");
        if (o.count("once-per-offset")) {
            s.once_per_offset = duration_option(o, "once-per-offset", duration_kind::non_negative);
            if (s.once_per_offset >= *s.once_per)
                throw usage_error("--once-per-offset " +
                                  sqlock::format_duration(s.once_per_offset) +
                                  " must be shorter than the --once-per window of " +
                                  sqlock::format_duration(*s.once_per));
        }
        s.once_per_any_outcome = o.count("once-per-any-outcome") > 0;
        s.tz = zone_setting(o.count("tz") > 0, string_option(o, "tz"));
        if (s.tz) check_local_window(std::chrono::duration_cast<milliseconds>(*s.once_per));
    } else if (o.count("tz")) {
        throw usage_error("--tz needs --once-per DUR: it says where windows start");
    } else if (o.count("once-per-offset") || o.count("once-per-any-outcome")) {
        throw usage_error(std::string(o.count("once-per-offset") ? "--once-per-offset"
                                                                 : "--once-per-any-outcome") +
                          " needs --once-per DUR");
    }
    return s;
}

}  // namespace sqlock_cli
