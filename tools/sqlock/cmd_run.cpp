// sqlock run NAME [OPTIONS] -- COMMAND [ARGS...]: the main job. Takes the
// lock, runs COMMAND, renews the lease while it runs, forwards signals,
// releases the lock when COMMAND has ended, and exits with its status.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>

#include "acquisition.hpp"
#include "child_process.hpp"
#include "command_line.hpp"
#include "commands.hpp"
#include "database.hpp"
#include "event_log.hpp"
#include "exit_codes.hpp"
#include "lock_format.hpp"
#include "option_values.hpp"
#include "process_tree.hpp"
#include "run_outcome.hpp"
#include "signals.hpp"
#include "supervisor.hpp"

namespace sqlock_cli {

const char* const run_details =
    "Runs COMMAND while holding lock NAME and releases the lock once COMMAND has ended.\n"
    "If another holder has the lock, COMMAND is not run: sqlock exits 75 (or\n"
    "--conflict-exit-code) at once, or after --wait. Otherwise sqlock exits with\n"
    "COMMAND's status: 128+N if a signal N killed it, 127 if it was not found, 126 if it\n"
    "could not be executed.\n"
    "\n"
    "The job is COMMAND and every process it starts, even in the background: sqlock is\n"
    "their subreaper (Linux) and keeps the lock until all of them have exited.\n"
    "Self-fencing and a lost lock stop all of them; forwarded signals go to COMMAND\n"
    "and to any process whose parent has ended.\n"
    "\n"
    "While the job runs the lease is renewed every sixth of --expires (--no-heartbeat\n"
    "turns that off). If renewals fail (the database is unreachable or does not answer),\n"
    "sqlock stops the job before anyone else can take the lock: SIGTERM at\n"
    "--kill-grace plus a margin (a twentieth of the lease, 200ms to 5s) before the lease\n"
    "that was last renewed could run out, SIGKILL at the margin, then it exits 79. A\n"
    "renewal that succeeds before the SIGTERM means nothing is signalled. If the lock\n"
    "is lost outright (force-released, taken over), the job gets SIGTERM, SIGKILL after\n"
    "--kill-grace, and sqlock exits 79. With --on-lost=ignore the job runs on and its\n"
    "status is kept. See docs/fencing.md for the guarantees and bounds.\n"
    "\n"
    "SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to sqlock are forwarded\n"
    "to the job; the lock is released after the job has ended. COMMAND stays in sqlock's\n"
    "process group, so Ctrl-C in a terminal reaches it directly (and is not forwarded a\n"
    "second time). If sqlock itself is killed (SIGKILL), COMMAND gets SIGTERM (Linux)\n"
    "and the lock frees when its lease ends.\n"
    "\n"
    "COMMAND's environment also has SQLOCK_NAME, SQLOCK_LOCKSTRING (\"name#N\" for a\n"
    "slot), SQLOCK_SLOT and SQLOCK_ID: the lock's fencing token, strictly increasing;\n"
    "with --once-per, SQLOCK_WINDOW_START: the window's start (UTC).\n"
    "\n"
    "--min-hold keeps the lock at least that long after it was taken, even when COMMAND\n"
    "ends sooner: a redundant host whose cron fires a few seconds later then finds it\n"
    "held and skips, instead of running a quick job a second time.\n"
    "\n"
    "Every run is recorded in the run history beside the lock table (`sqlock\n"
    "history`): host, pid, user, program, fencing id, start, end, outcome (succeeded,\n"
    "failed, killed, lost) and exit status or signal. The outcome is written before\n"
    "the lock is released; if that fails, sqlock says so and exits with the error's\n"
    "code (69, 70, 78) unless COMMAND failed. --no-history turns recording off.\n"
    "\n"
    "--once-per DUR runs COMMAND at most once per window of DUR: windows on the\n"
    "database's clock, in UTC, aligned on the Unix epoch (1d is a UTC day), shifted\n"
    "by --once-per-offset (1d with 3h: days that start at 03:00 UTC). Under the lock,\n"
    "sqlock looks for a run of NAME in the current window that succeeded (with\n"
    "--once-per-any-outcome: that ended in any way); if there is one, COMMAND is not\n"
    "run and sqlock exits 0 (a line with --verbose). A failed, killed or lost run\n"
    "leaves the window open for the next attempt. Decided under the lock and\n"
    "recorded before it is released, so hosts never both run one window, whatever\n"
    "their clocks or cron times.\n"
    "\n"
    "A job paused with `sqlock pause NAME` is not run on any host: after taking the\n"
    "lock (before the --once-per decision) sqlock finds the pause, releases the lock\n"
    "and exits 80 with a line saying who paused it, when and why (none with --quiet).\n"
    "A paused --once-per window is not marked done. A lock table made before pauses\n"
    "existed (no <table>_pauses) has none; `sqlock init` adds the table.\n"
    "\n"
    "--log-format json (or SQLOCK_LOG_FORMAT=json) writes one JSON object per line on\n"
    "stderr instead of \"sqlock: \" lines: the events acquired, waiting, started,\n"
    "renewed_late, fencing, lost, exited, released, skipped (with the reason: busy, timeout, "
    "paused,\n"
    "window_done, interrupted) and error, each with time, level, event, message, the\n"
    "lock name, host, pid and database. COMMAND's own output is left as it is. See\n"
    "docs/logging.md.\n"
    "\n"
    "Examples:\n"
    "  sqlock run nightly-backup --expires 2h -- /usr/local/bin/backup --full\n"
    "  sqlock run nightly-report --once-per 1d --once-per-offset 3h -- /usr/local/bin/report\n"
    "  sqlock run reindex --wait 10m -- psql -c 'REINDEX DATABASE app'\n"
    "  sqlock run report --min-hold 5m --quiet -- /usr/local/bin/report\n"
    "  sqlock run gpu --slots 4 --wait 1h -- ./train.sh\n";

void add_run_options(cxxopts::Options& options, const std::string& group) {
    auto add = options.add_options(group);
    add("expires", "Lease: the lock stops counting this long after it was taken or last renewed",
        cxxopts::value<std::string>()->default_value("1h"), "DUR");
    add_wait_options(add, "skips at once");
    add("slots", "Counting semaphore: take one of N slots of NAME (at most N runs at once)",
        cxxopts::value<std::string>(), "N");
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
    add("kill-grace",
        "Time between SIGTERM and SIGKILL when the job must stop (default: 10s, or less so "
        "that it fits half the lease)",
        cxxopts::value<std::string>(), "DUR");
    add("E,conflict-exit-code", "Exit code when the lock is busy or --wait runs out (default 75)",
        cxxopts::value<std::string>(), "N");
    add("once-per",
        "Run COMMAND at most once per window of DUR (UTC, database clock); exit 0 if this "
        "window's run already succeeded",
        cxxopts::value<std::string>(), "DUR");
    add("once-per-offset", "Shift the --once-per windows' start by DUR (less than the window)",
        cxxopts::value<std::string>(), "DUR");
    add("once-per-any-outcome",
        "With --once-per: a run that failed, was killed or lost also counts as done");
    add("no-history", "Do not record this run in the run history (`sqlock history`)");
    add("log-format",
        "How run reports on stderr: text (lines for people, the default) or json (one object "
        "per event, for journald or a log shipper); default $SQLOCK_LOG_FORMAT",
        cxxopts::value<std::string>(), "FORMAT");
}

namespace {

using std::chrono::milliseconds;

struct RunSettings {
    AcquireRequest request;
    bool terminate_on_lost = true;
    milliseconds grace{10000};
    milliseconds margin{200};
    int conflict_code = exit_code::busy;
    std::vector<std::string> command;
    bool history = true;
    std::optional<sqlock::duration> once_per;  // the window, with --once-per
    sqlock::duration once_per_offset{};
    bool once_per_any_outcome = false;
};

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

RunSettings parse_settings(const Invocation& inv) {
    const auto& o = inv.options;
    const std::string usage = "usage: sqlock run NAME [OPTIONS] -- COMMAND [ARGS...]";
    if (inv.args.empty()) throw usage_error("run needs a lock name; " + usage);
    if (inv.args.size() > 1)
        throw usage_error("unexpected argument " + in_quotes(inv.args[1]) +
                          " before `--`: put the command after `--`; " + usage);
    if (!inv.has_separator || inv.exec_argv.empty())
        throw usage_error("run needs a command after `--`; " + usage);
    if (o.count("heartbeat") && o.count("no-heartbeat"))
        throw usage_error("--heartbeat and --no-heartbeat contradict each other");

    RunSettings s;
    s.command = inv.exec_argv;
    s.request.name = inv.args[0];
    s.request.slots = static_cast<int>(integer_option(o, "slots", 1, 10000, 0));
    const WaitOption wait = wait_option(o);
    s.request.wait = wait.wait;
    s.request.wait_forever = wait.forever;
    s.request.options.expires = duration_option(o, "expires", duration_kind::positive);
    s.request.options.min_hold = duration_option(o, "min-hold", duration_kind::non_negative);
    // Said here in the command's words (the library names its fields).
    if (s.request.options.min_hold > s.request.options.expires)
        throw usage_error("--min-hold " + sqlock::format_duration(s.request.options.min_hold) +
                          " is longer than --expires " +
                          sqlock::format_duration(s.request.options.expires) +
                          ": the lock would end before its minimum hold");
    s.request.options.heartbeat = o.count("no-heartbeat") == 0;
    s.request.options.metadata["command"] = command_label(s.command.front());
    if (o.count("label"))
        s.request.options.metadata["label"] = command_label(string_option(o, "label"));
    std::string on_lost = string_option(o, "on-lost", "term");
    if (on_lost != "term" && on_lost != "ignore")
        throw usage_error("--on-lost must be term or ignore, got " + in_quotes(on_lost));
    s.terminate_on_lost = on_lost == "term";
    s.conflict_code =
        static_cast<int>(integer_option(o, "conflict-exit-code", 0, 255, exit_code::busy));
    fit_grace(o, s);
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
    } else if (o.count("once-per-offset") || o.count("once-per-any-outcome")) {
        throw usage_error(std::string(o.count("once-per-offset") ? "--once-per-offset"
                                                                 : "--once-per-any-outcome") +
                          " needs --once-per DUR");
    }
    return s;
}

std::string describe(const sqlock::Lock& lock) {
    return "lock " + in_quotes(lock.lockstring()) + " (id " + std::to_string(lock.id()) + ")";
}

}  // namespace

namespace {

std::string this_host() {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
    return sqlock::text::printable(name);
}

nlohmann::ordered_json run_end_json(const sqlock::RunEnd& end) {
    nlohmann::ordered_json j = {{"outcome", sqlock::to_string(end.outcome)}};
    j["exit_status"] = end.exit_status ? nlohmann::ordered_json(*end.exit_status) : nullptr;
    j["signal"] = end.signal ? nlohmann::ordered_json(signal_name(*end.signal)) : nullptr;
    return j;
}

int run_job(Invocation& inv, RunSettings& s, EventLog& log);

}  // namespace

int run_run(Invocation& inv) {
    const log_format format = log_format_option(inv.options);
    nlohmann::ordered_json context = nlohmann::ordered_json::object();
    if (!inv.args.empty()) context["name"] = sqlock::text::printable(inv.args[0]);
    context["host"] = this_host();
    context["pid"] = static_cast<long>(::getpid());
    EventLog log(inv.out, format, std::move(context));
    // A release the Lock's destructor makes (on a way out that skipped the
    // explicit one) reports through Output too: in JSON, as an event.
    const sqlock::release_error_handler previous =
        sqlock::set_release_error_handler([](const sqlock::error& e) {
            Output::error(std::string("releasing the lock failed: ") + e.what());
        });
    struct Restore {
        const sqlock::release_error_handler& handler;
        ~Restore() { sqlock::set_release_error_handler(handler); }
    } restore{previous};
    // Every way out of a run that is not the command's own status is one
    // event (JSON) or one line (text, printed by main).
    try {
        RunSettings s = parse_settings(inv);
        return run_job(inv, s, log);
    } catch (const cli_error& e) {
        throw log.ending(event_level::error, "error", e.code(), e.what(), {}, e.quiet_ok());
    } catch (const sqlock::error& e) {
        throw log.ending(event_level::error, "error", exit_code_for(e.category()), e.what(),
                         {{"category", sqlock::to_string(e.category())}});
    }
}

namespace {

int run_job(Invocation& inv, RunSettings& s, EventLog& log) {
    // Before the Locker: the library's threads must inherit the blocked mask.
    SignalRelay signals;
    // Opening connects nothing yet; it validates the URL and table, and
    // names the database for the messages below. Each round trip is bounded
    // by a sixth of the lease (1 s to 10 s) unless --db-timeout says.
    const auto lease = s.request.options.expires;
    sqlock::Locker locker = open_locker(
        inv.global, false,
        std::clamp<sqlock::duration>(lease / 6, std::chrono::seconds(1), std::chrono::seconds(10)));
    const std::string db = at_database(locker.url());
    log.add_context("db", sqlock::text::printable(locker.url()));
    // Before the lock: a mistyped command must not take (or, with
    // --min-hold, keep) a lock.
    std::string path;
    try {
        path = resolve_executable(s.command.front());
    } catch (const cli_error& e) {
        throw cli_error(e.code(), e.what() + std::string(" (lock ") + in_quotes(s.request.name) +
                                      " not taken)" + db);
    }

    auto lost = std::make_shared<std::atomic<bool>>(false);
    s.request.options.on_lost = [lost](const std::string&, std::int64_t) { *lost = true; };
    s.request.options.on_renewed_late = [&log, db](const std::string&, std::int64_t id, int failed,
                                                   sqlock::duration left) {
        log.event(
            event_level::warning, "renewed_late",
            "renewed the lease of lock id " + std::to_string(id) +
                " late: " + std::to_string(failed) + " attempt" + (failed == 1 ? "" : "s") +
                " had failed, " + sqlock::format_duration(left) + " of it was left" + db,
            {{"id", id}, {"failed_attempts", failed}, {"lease_left_seconds", seconds_value(left)}});
    };
    // The progress line is for people; JSON has an event when the wait
    // begins, and one for how it ended.
    const Output acquire_out = log.json() ? Output(true, false) : inv.out;
    s.request.on_wait_start = [&](const sqlock::LockInfo* holder) {
        nlohmann::ordered_json fields;
        fields["holder"] = holder ? lock_json(*holder) : nullptr;
        fields["wait_seconds"] = s.request.wait_forever
                                     ? nullptr
                                     : nlohmann::ordered_json(seconds_value(s.request.wait));
        log.event(
            event_level::info, "waiting",
            std::string("waiting ") +
                (s.request.wait_forever ? "without a time limit"
                                        : "up to " + sqlock::format_duration(s.request.wait)) +
                " for " + (s.request.slots ? "semaphore " : "lock ") + in_quotes(s.request.name) +
                db,
            fields);
    };
    std::optional<sqlock::Lock> lock;
    try {
        lock.emplace(
            acquire(locker, s.request, acquire_out, [&signals] { return signals.take_pending(); }));
    } catch (const sqlock::error& e) {
        if (e.category() != sqlock::errc::busy && e.category() != sqlock::errc::timeout) throw;
        nlohmann::ordered_json fields = {
            {"reason", e.category() == sqlock::errc::busy ? "busy" : "timeout"}};
        fields["holder"] = e.holder() ? lock_json(*e.holder()) : nullptr;
        throw log.ending(event_level::notice, "skipped", s.conflict_code, e.what(), fields,
                         /*quiet_ok=*/true);
    } catch (const cli_error& e) {
        if (e.code() <= exit_code::signal_base) throw;  // interrupted while waiting
        throw log.ending(event_level::warning, "skipped", e.code(), e.what(),
                         {{"reason", "interrupted"},
                          {"signal", signal_name(e.code() - exit_code::signal_base)}});
    }
    // Computed now: a released Lock no longer answers questions.
    const std::string what = describe(*lock);
    log.event(event_level::info, "acquired",
              "acquired " + what + ", lease " + sqlock::format_duration(s.request.options.expires) +
                  " until " + lock->expires() + " UTC" + db,
              {{"lockstring", sqlock::text::printable(lock->lockstring())},
               {"id", lock->id()},
               {"slot", lock->slot()},
               {"expires", lock->expires()},
               {"lease_seconds", seconds_value(s.request.options.expires)}});
    const std::int64_t lock_id = lock->id();

    // When the command is not started after all, release now; a failed
    // release is reported, but the reason for not starting is the error.
    auto release_unused = [&] {
        try {
            lock->release();
        } catch (const std::exception& e) {
            Output::error(e.what());
        }
    };

    // A signal that came while the lock was being taken (blocked until now)
    // means "stop": do not start the command for it to find on arrival.
    if (int signo = signals.take_pending()) {
        release_unused();
        throw log.ending(event_level::warning, "skipped", exit_code::signal_base + signo,
                         "interrupted by " + signal_name(signo) + " before starting " +
                             in_quotes(s.command.front()) + "; released " + what + db,
                         {{"reason", "interrupted"}, {"signal", signal_name(signo)}});
    }

    // valid_until counts from when the acquisition was sent: one that waited
    // long for the database (SQLite's busy wait) has little of its lease
    // left to vouch for. Renew once first, so that the job is not started
    // only to be stopped at once.
    if (s.request.options.heartbeat && s.terminate_on_lost &&
        lock->valid_until() - std::chrono::steady_clock::now() < lease / 2) {
        try {
            lock->renew();
        } catch (const sqlock::error& e) {
            release_unused();
            throw cli_error(exit_code_for(e.category()),
                            std::string(e.what()) + " (renewing before starting " +
                                in_quotes(s.command.front()) + ", which was not started)");
        }
    }

    // The pause, under the lock, where the once-per decision is made: a
    // pause issued while another host ran the job lets that run finish,
    // and every run that takes the lock after it sees it. A paused window
    // is not run and not marked done. If the pause cannot be read, the job
    // does not run: a pause must not be missed for a database hiccup.
    const std::string job_name = in_quotes(s.command.front());
    std::optional<sqlock::PauseInfo> pause;
    try {
        pause = locker.paused(s.request.name);
    } catch (const sqlock::error& e) {
        release_unused();
        throw cli_error(exit_code_for(e.category()), std::string(e.what()) +
                                                         " (checking whether it is paused; " +
                                                         job_name + " was not started)");
    }
    if (pause) {
        try {
            lock->release();
        } catch (const sqlock::error& e) {
            Output::error("the job is paused, but releasing the lock failed: " +
                          std::string(e.what()));
            lock->detach();
        }
        throw log.ending(event_level::notice, "skipped", exit_code::paused,
                         describe_pause(*pause) + "; not running " + job_name + db,
                         {{"reason", "paused"}, {"pause", pause_json(*pause)}},
                         /*quiet_ok=*/true);
    }

    // The once-per decision, under the lock: a run of this window that
    // counts was recorded (before its lock was released) by whoever held it.
    std::optional<sqlock::OncePerWindow> window;
    if (s.once_per) {
        try {
            window = locker.once_per_window(*lock, *s.once_per, s.once_per_offset,
                                            s.once_per_any_outcome);
        } catch (const sqlock::error& e) {
            release_unused();
            throw cli_error(exit_code_for(e.category()),
                            std::string(e.what()) + " (deciding on the --once-per window; " +
                                job_name + " was not started)");
        }
        if (window->done) {
            const sqlock::RunRecord& by = *window->done_by;
            log.event(event_level::info, "skipped",
                      "window " + window->start + " to " + window->end + " UTC of " +
                          in_quotes(s.request.name) + " is done: run " + std::to_string(by.id) +
                          " " + sqlock::to_string(by.outcome) + " on " +
                          sqlock::text::printable(by.host) + " (started " + by.started +
                          " UTC); not running " + job_name + db,
                      {{"reason", "window_done"},
                       {"window_start", window->start},
                       {"window_end", window->end},
                       {"done_by", run_json(by)},
                       {"exit_code", exit_code::ok}});
            try {
                lock->release();
            } catch (const sqlock::error& e) {
                lock->detach();
                throw log.ending(
                    event_level::error, "error", exit_code_for(e.category()),
                    "the window was done, but releasing the lock failed: " + std::string(e.what()));
            }
            return exit_code::ok;
        }
    }
    std::optional<std::int64_t> run_id;
    if (s.history) {
        sqlock::RunStart start;
        start.program = command_label(s.command.front());
        if (window) start.window_start_ms = window->start_ms;
        try {
            run_id = locker.start_run(*lock, start);
            inv.out.detail("recording run " + std::to_string(*run_id) + " of " +
                           in_quotes(s.request.name) +
                           (window ? " for window " + window->start + " UTC" : std::string()) + db);
        } catch (const sqlock::error& e) {
            if (window) {
                release_unused();
                throw cli_error(exit_code_for(e.category()),
                                std::string(e.what()) + " (recording the start of the run; " +
                                    job_name + " was not started)");
            }
            // Without --once-per nothing depends on the record: the job runs,
            // and the operator hears why it is not in the history.
            Output::error("not recording this run in the history: " + std::string(e.what()));
        }
    }

    std::vector<std::string> extra_env = {
        "SQLOCK_NAME=" + lock->name(),
        "SQLOCK_LOCKSTRING=" + lock->lockstring(),
        "SQLOCK_SLOT=" + std::to_string(lock->slot()),
        "SQLOCK_ID=" + std::to_string(lock->id()),
    };
    if (window) extra_env.push_back("SQLOCK_WINDOW_START=" + window->start);
    std::vector<std::string> env = command_environment(extra_env);
    // The job's background processes stay ours (see process_tree.hpp).
    become_subreaper();
    std::optional<ChildProcess> child;
    try {
        child.emplace(ChildProcess::spawn(path, s.command, env, signals.original_mask()));
    } catch (const cli_error& e) {
        release_unused();
        throw cli_error(e.code(), e.what() + db);
    }
    const auto started = std::chrono::steady_clock::now();
    {
        nlohmann::ordered_json fields = {{"id", lock_id},
                                         {"command", command_label(s.command.front())},
                                         {"child_pid", static_cast<long>(child->pid())}};
        fields["run_id"] = run_id ? nlohmann::ordered_json(*run_id) : nullptr;
        fields["window_start"] = window ? nlohmann::ordered_json(window->start) : nullptr;
        log.event(event_level::info, "started",
                  "started " + job_name + " (pid " + std::to_string(child->pid()) + ") under " +
                      what + db,
                  fields);
    }

    SupervisePolicy policy;
    policy.terminate_on_lost = s.terminate_on_lost;
    policy.fence = s.terminate_on_lost && s.request.options.heartbeat;
    policy.grace = s.grace;
    policy.margin = s.margin;
    policy.valid_until = [&lock] { return lock->valid_until(); };
    const std::string job = in_quotes(s.command.front());
    SuperviseEvents events;
    events.lost = [&] {
        log.event(event_level::error, "lost",
                  "lost " + what + " while " + job +
                      " was running: it was taken over or force-released, or its lease ran "
                      "out unrenewed; " +
                      (s.terminate_on_lost ? "terminating the command and its processes"
                                           : "letting the command finish (--on-lost=ignore)") +
                      db,
                  {{"id", lock_id}, {"on_lost", s.terminate_on_lost ? "term" : "ignore"}});
    };
    events.fencing = [&] {
        log.event(event_level::error, "fencing",
                  "cannot renew " + what + ": the database did not answer in time; stopping " +
                      job + " before its lease can run out (SIGTERM now, SIGKILL after " +
                      sqlock::format_duration(s.grace) + ")" + db,
                  {{"id", lock_id}, {"kill_grace_seconds", seconds_value(s.grace)}});
    };
    events.waiting_for = [&](int n) {
        log.event(event_level::info, "waiting_for_processes",
                  job + " has ended; keeping " + what + " until the " + std::to_string(n) +
                      " process" + (n == 1 ? "" : "es") + " it started have ended too" + db,
                  {{"id", lock_id}, {"processes", n}});
    };
    SuperviseResult result = supervise(*child, signals, *lost, policy, events);
    const sqlock::RunEnd end = run_end(result);
    {
        nlohmann::ordered_json fields = {{"id", lock_id}};
        fields.update(run_end_json(end));
        fields["duration_seconds"] = seconds_value(
            std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - started));
        fields["leftovers"] = result.leftovers;
        // info whatever the outcome: in text, the command's failure is its
        // own to report (sqlock exits with its status).
        log.event(event_level::info, "exited",
                  job + " has ended (" + sqlock::to_string(end.outcome) + ")" + db, fields);
    }
    if (result.leftovers)
        Output::error("some processes of the job did not die after SIGKILL; leaving them" + db);
    RunOutcome outcome;
    outcome.wait_status = result.status;
    outcome.fenced = result.fenced;
    outcome.lost_while_running = result.lost;
    outcome.terminate_on_lost = s.terminate_on_lost;
    if (result.fenced) {
        // The lease could not be renewed: the database may be out of reach,
        // so do not wait for it. The row expires by itself; releasing it
        // could not make anyone's start earlier than that by much. The run
        // reads as lost in the history once the lease has run out.
        lock->detach();
        return exit_status(outcome);
    }
    // The outcome is recorded before the release: whoever takes the lock
    // next finds it (what makes --once-per hold across hosts).
    std::string record_error;  // printed after the release: one line if both fail
    if (run_id) {
        try {
            const sqlock::run_outcome recorded = locker.finish_run(*lock, *run_id, end);
            outcome.lost_at_record = recorded != end.outcome;
            // A lock lost unnoticed (no heartbeat) is recorded lost; the
            // release below finds the loss too and says so.
            inv.out.detail("recorded run " + std::to_string(*run_id) + " as " +
                           sqlock::to_string(recorded) +
                           (recorded != end.outcome
                                ? ": " + what + " was no longer held when " + job + " ended"
                                : std::string()) +
                           db);
        } catch (const sqlock::error& e) {
            record_error = "recording that in the run history failed: " + std::string(e.what()) +
                           // A statement that got no answer may still have been
                           // applied (delivered late): then the window is done.
                           (s.once_per ? "; the window may be left open, and run again" : "");
            outcome.record_failure = exit_code_for(e.category());
        }
    }
    const std::string ended = job + " has ended (" + sqlock::to_string(end.outcome) + ")";
    try {
        lock->release();
        const bool kept = s.request.options.min_hold > sqlock::duration::zero();
        log.event(event_level::info, "released",
                  kept ? "released " + what + "; its row stays until " +
                             sqlock::format_duration(s.request.options.min_hold) +
                             " after it was taken (--min-hold)" + db
                       : "released " + what + db,
                  {{"id", lock_id}, {"min_hold", kept}});
    } catch (const sqlock::error& e) {
        if (e.category() == sqlock::errc::lost) {
            if (!outcome.lost_while_running)  // found only now (no heartbeat)
                log.event(event_level::error, "lost", e.what(),
                          {{"id", lock_id}, {"on_lost", s.terminate_on_lost ? "term" : "ignore"}});
            outcome.lost_at_release = true;
        } else {
            Output::error(
                "the command has ended, but releasing the lock failed: " + std::string(e.what()) +
                (record_error.empty() ? std::string() : " (and " + record_error + ")"));
            record_error.clear();
            outcome.release_failure = exit_code_for(e.category());
            // Reported once: the Lock's destructor would retry the release
            // and report its failure a second time. The row ends with its
            // lease.
            lock->detach();
        }
    }
    if (!record_error.empty()) Output::error(ended + ", but " + record_error);
    // The lease ran out unrenewed and nobody took the lock over: the
    // release went through, but the run cannot count as done.
    if (outcome.lost_at_record && !outcome.lost_while_running && !outcome.lost_at_release) {
        log.event(event_level::error, "lost",
                  "recorded run " + std::to_string(*run_id) + " as lost, not " +
                      sqlock::to_string(end.outcome) + ": the lease of " + what +
                      " had run out when " + job + " ended" + db,
                  {{"id", lock_id}, {"on_lost", s.terminate_on_lost ? "term" : "ignore"}});
    }
    return exit_status(outcome);
}

}  // namespace

}  // namespace sqlock_cli
