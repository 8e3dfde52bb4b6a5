// sqlock run NAME [OPTIONS] -- COMMAND [ARGS...]: the main job. Takes the
// lock, runs COMMAND, renews the lease while it runs, forwards signals,
// releases the lock when COMMAND has ended, and exits with its status.
// Here: the options, the help, and the JSON log's context; the session's
// phases are in run_session.cpp, its exit status in run_outcome.cpp.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "after_chain.hpp"
#include "command_line.hpp"
#include "commands.hpp"
#include "event_log.hpp"
#include "exit_codes.hpp"
#include "local_windows.hpp"
#include "lock_format.hpp"
#include "option_values.hpp"
#include "run_session.hpp"
#include "text.hpp"

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
    "Self-fencing, a lost lock and --max-runtime stop all of them; forwarded signals\n"
    "go to COMMAND and to any process whose parent has ended.\n"
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
    "--max-runtime DUR bounds the job itself: DUR after COMMAND started, the whole job\n"
    "gets SIGTERM, SIGKILL after --kill-grace, and sqlock exits 124 (as timeout(1)\n"
    "does), even if COMMAND then exits 0; a lost or fenced lock still exits 79. The\n"
    "run is recorded as timed_out. It is independent of the lease: it may be longer\n"
    "than --expires (the heartbeat renews), and it stops a job that hangs and would\n"
    "otherwise keep its lock renewed for ever.\n"
    "\n"
    "SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to sqlock are forwarded\n"
    "to the job; the lock is released after the job has ended. COMMAND stays in sqlock's\n"
    "process group, so Ctrl-C in a terminal reaches it directly (and is not forwarded a\n"
    "second time). If sqlock itself is killed (SIGKILL), COMMAND gets SIGTERM (Linux)\n"
    "and the lock frees when its lease ends.\n"
    "\n"
    "Several names (`run A B C -- COMMAND`) are taken as one set, all or nothing, in\n"
    "one transaction; a set that waits holds none of them (docs/lock-sets.md). Each\n"
    "name keeps its own fencing id. A set's runs are not recorded in the history, and\n"
    "it takes neither --slots nor --once-per; a pause of any of its names skips it.\n"
    "\n"
    "--shared takes NAME shared: the job runs beside other --shared runs of NAME, never\n"
    "beside an exclusive one, and an exclusive run that waits goes before the shared\n"
    "runs that come after it (docs/shared-locks.md). SQLOCK_MODE says which. With\n"
    "several names, every one is taken shared, as one set.\n"
    "\n"
    "COMMAND's environment also has SQLOCK_NAME, SQLOCK_LOCKSTRING (\"name#N\" for a\n"
    "slot), SQLOCK_SLOT and SQLOCK_ID: the lock's fencing token, strictly increasing\n"
    "(of a set: its first name's, in bytewise order); SQLOCK_LOCKS, a JSON object of\n"
    "every name held and its fencing id; SQLOCK_GUARD, SQL that the job's own client\n"
    "runs inside its transaction on the lock's database so that it commits only while\n"
    "the lock is held (docs/guarded-writes.md); with --once-per, SQLOCK_WINDOW_START:\n"
    "the window's start (UTC).\n"
    "\n"
    "--min-hold keeps the lock at least that long after it was taken, even when COMMAND\n"
    "ends sooner: a redundant host whose cron fires a few seconds later then finds it\n"
    "held and skips, instead of running a quick job a second time.\n"
    "\n"
    "Every run is recorded in the run history beside the lock table (`sqlock\n"
    "history`): host, pid, user, program, fencing id, start, end, outcome (succeeded,\n"
    "failed, killed, lost, timed_out) and exit status or signal. The outcome is\n"
    "written before the lock is released; if that fails, sqlock says so and exits\n"
    "with the error's code (69, 70, 78) unless COMMAND failed (or timed out).\n"
    "--no-history turns recording off.\n"
    "\n"
    "--once-per DUR runs COMMAND at most once per window of DUR: windows on the\n"
    "database's clock, in UTC, aligned on the Unix epoch (1d is a UTC day), shifted\n"
    "by --once-per-offset (1d with 3h: days that start at 03:00 UTC). With --tz ZONE\n"
    "(or SQLOCK_TZ), windows are aligned on local midnight in that IANA zone: whole\n"
    "days are local calendar days (23 or 25 hours at a DST change), and a length that\n"
    "divides a day (1h, 6h) counts real time from local midnight, the day's last\n"
    "window ending at the next; --once-per-offset shifts them in local time. Still\n"
    "judged by the database's clock. Under the lock, sqlock looks for a run of NAME\n"
    "in the current window that succeeded (with --once-per-any-outcome: that ended\n"
    "in any way); if there is one, COMMAND is not run and sqlock exits 0 (a line\n"
    "with --verbose). A failed, killed, lost or\n"
    "timed-out run leaves the window open for the next attempt. Decided under the\n"
    "lock and recorded before it is released, so hosts never both run one window,\n"
    "whatever their clocks or cron times.\n"
    "\n"
    "--after A[,B...] runs COMMAND only after jobs A, B...: under the lock (after the\n"
    "--once-per decision), each one's newest run in the history must have succeeded\n"
    "and ended within --after-within DUR, or, without it, since the start of this\n"
    "--once-per window (\"once a day, after today's import\"), by the database's\n"
    "clock, whichever host ran it. Otherwise COMMAND is not run and sqlock exits 0,\n"
    "saying which job failed last, is still running or has no recent success (a line\n"
    "unless --quiet when one failed, else with --verbose), and records the skip in the\n"
    "history as after_failed or after_pending. With --wait, a job still running is\n"
    "waited for within the wait, the lock held meanwhile.\n"
    "\n"
    "A job paused with `sqlock pause NAME` is not run on any host: after taking the\n"
    "lock (before the --once-per decision) sqlock finds the pause, releases the lock\n"
    "and exits 80 with a line saying who paused it, when and why (none with --quiet).\n"
    "A paused --once-per window is not marked done. A lock table made before pauses\n"
    "existed (no <table>_pauses) has none; `sqlock init` adds the table.\n"
    "\n"
    "--log-format json (or SQLOCK_LOG_FORMAT=json) writes one JSON object per line on\n"
    "stderr instead of \"sqlock: \" lines: the events acquired, waiting, started,\n"
    "renewed_late, fencing, lost, timed_out, exited, released, skipped (with the\n"
    "reason: busy, timeout, paused, window_done, after, interrupted) and error, each with\n"
    "time, level, event, message, the lock name, host, pid and database. COMMAND's\n"
    "own output is left as it is. See docs/logging.md.\n"
    "\n"
    "--splay DUR waits a random time in [0, DUR) before asking for the lock, so that\n"
    "hosts whose cron fires on the same second do not all reach the database at once\n"
    "(--verbose says how long). A forwarded signal ends the wait: nothing is taken,\n"
    "COMMAND does not run, and sqlock exits 128+N (143 for SIGTERM).\n"
    "\n"
    "--notify CMD (repeatable) runs CMD through sh -c on the host that runs the job:\n"
    "once before COMMAND starts (SQLOCK_EVENT=start) and once after the lock was\n"
    "released at the end (SQLOCK_EVENT=end), with SQLOCK_OUTCOME (the history's\n"
    "outcome: succeeded, failed, killed, lost, timed_out), SQLOCK_EXIT (the status\n"
    "run exits with), SQLOCK_DURATION (seconds), SQLOCK_NAME, SQLOCK_ID, SQLOCK_RUN_ID\n"
    "and SQLOCK_HOST. A host that does not run the job notifies nothing, unless\n"
    "--notify-skips asks for SQLOCK_EVENT=skip (SQLOCK_OUTCOME: busy, timeout,\n"
    "paused, window_done, after, interrupted). --notify-output passes the job's\n"
    "stdout and stderr through pipes and gives the end event their last 64 KiB in\n"
    "the file $SQLOCK_OUTPUT_FILE (removed afterwards). CMD's stdin is /dev/null and its\n"
    "stdout goes to stderr. It is killed after --notify-timeout (10s); its failure\n"
    "is reported (event notify_failed) and changes neither the exit status nor the\n"
    "lock. It never sees the database's password: SQLOCK_DB, PGPASSWORD, MYSQL_PWD\n"
    "and any variable holding a password of the database URL are left out of its\n"
    "environment. See docs/cron.md.\n"
    "\n"
    "Examples:\n"
    "  sqlock run nightly-backup --expires 2h -- /usr/local/bin/backup --full\n"
    "  sqlock run sync --max-runtime 30m -- /usr/local/bin/sync\n"
    "  sqlock run nightly-report --once-per 1d --once-per-offset 3h -- /usr/local/bin/report\n"
    "  sqlock run reindex --wait 10m -- psql -c 'REINDEX DATABASE app'\n"
    "  sqlock run report --min-hold 5m --quiet -- /usr/local/bin/report\n"
    "  sqlock run report --once-per 1d --after import -- /usr/local/bin/report\n"
    "  sqlock run gpu --slots 4 --wait 1h -- ./train.sh\n"
    "  sqlock run orders-db --shared --wait 10m -- ./report.sh\n"
    "  sqlock run report --splay 30s --once-per 1d \\\n"
    "      --notify 'curl -fsS -m 10 -o /dev/null "
    "https://hc.example/ping/UUID/${SQLOCK_EXIT:-start}' \\\n"
    "      -- /usr/local/bin/report\n";

void add_job_options(cxxopts::Options& options, const std::string& group) {
    auto add = options.add_options(group);
    add("expires", "Lease: the lock stops counting this long after it was taken or last renewed",
        cxxopts::value<std::string>()->default_value("1h"), "DUR");
    add_wait_options(add, "skips at once");
    add("slots", "Counting semaphore: take one of N slots of NAME (at most N runs at once)",
        cxxopts::value<std::string>(), "N");
    add("shared",
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

void add_run_options(cxxopts::Options& options, const std::string& group) {
    add_job_options(options, group);
    auto add = options.add_options(group);
    add("splay",
        "Wait a random time in [0, DUR) before asking for the lock, so that a fleet's cron does "
        "not hit the database on the same second",
        cxxopts::value<std::string>(), "DUR");
    add("tz",
        "With --once-per: windows in time zone ZONE (e.g. Europe/Berlin), from its local "
        "midnight; default $SQLOCK_TZ, else UTC",
        cxxopts::value<std::string>(), "ZONE");
    add("retry",
        "Run COMMAND again, up to N more times, when it fails by itself; the lock stays held "
        "in between",
        cxxopts::value<std::string>(), "N");
    add("retry-delay",
        "Wait DUR before the first retry, doubling for each further one (jittered, at most 10m "
        "or DUR; default 10s)",
        cxxopts::value<std::string>(), "DUR");
    add("notify",
        "Run CMD (through sh -c) when the job starts and when it has ended, on the host that "
        "runs it (repeatable; see SQLOCK_EVENT)",
        cxxopts::value<std::vector<std::string>>(), "CMD");
    add("notify-output",
        "Give --notify the tail of the job's output in a file ($SQLOCK_OUTPUT_FILE); the output "
        "still goes where it goes");
    add("notify-skips",
        "Also run --notify (SQLOCK_EVENT=skip) when this host does not run the job (busy, "
        "paused, window done)");
    add("notify-timeout", "Kill a --notify command that has not ended after DUR (default 10s)",
        cxxopts::value<std::string>(), "DUR");
    add("after",
        "Run COMMAND only if each job NAME's last run succeeded (within --after-within, else in "
        "this --once-per window); otherwise exit 0 (repeatable, or NAME,NAME)",
        cxxopts::value<std::vector<std::string>>(), "NAME");
    add("after-within",
        "With --after: a success counts if it ended within DUR (default: the --once-per window)",
        cxxopts::value<std::string>(), "DUR");
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

RunSettings parse_settings(const Invocation& inv) {
    RunSettings s = parse_run_settings(
        inv, "run", "usage: sqlock run NAME [NAME...] [OPTIONS] -- COMMAND [ARGS...]");
    parse_cron_settings(inv.options, s);
    parse_after_settings(inv.options, s);
    return s;
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

std::string this_host() {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
    return sqlock::text::printable(name);
}

void parse_cron_settings(const cxxopts::ParseResult& o, RunSettings& s) {
    if (o.count("splay"))
        s.splay = std::chrono::duration_cast<milliseconds>(
            duration_option(o, "splay", duration_kind::non_negative));
    s.retries = static_cast<int>(integer_option(o, "retry", 0, 100, 0));
    if (o.count("retry-delay")) {
        if (!o.count("retry")) throw usage_error("--retry-delay needs --retry N");
        s.retry_delay = std::chrono::duration_cast<milliseconds>(
            duration_option(o, "retry-delay", duration_kind::positive));
    }
    if (o.count("notify")) {
        s.notify = o["notify"].as<std::vector<std::string>>();
        for (const std::string& cmd : s.notify)
            if (cmd.find_first_not_of(" \t\n") == std::string::npos)
                throw usage_error("--notify needs a shell command, got " + in_quotes(cmd));
    }
    s.notify_output = o.count("notify-output") > 0;
    s.notify_skips = o.count("notify-skips") > 0;
    if (o.count("notify-timeout"))
        s.notify_timeout = std::chrono::duration_cast<milliseconds>(
            duration_option(o, "notify-timeout", duration_kind::positive));
    if (s.notify.empty())
        for (const char* needs : {"notify-output", "notify-skips", "notify-timeout"})
            if (o.count(needs))
                throw usage_error(std::string("--") + needs + " needs --notify CMD");
}

int run_run(Invocation& inv) {
    return run_guarded(inv, parse_settings);
}

int run_guarded(Invocation& inv, const std::function<RunSettings(const Invocation&)>& parse) {
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
        RunSettings s = parse(inv);
        RunSession session(inv, s, log);
        return session.run();
    } catch (const cli_error& e) {
        throw log.ending(event_level::error, "error", e.code(), e.what(), {}, e.quiet_ok());
    } catch (const sqlock::error& e) {
        throw log.ending(event_level::error, "error", exit_code_for(e.category()), e.what(),
                         {{"category", sqlock::to_string(e.category())}});
    }
}

}  // namespace sqlock_cli
