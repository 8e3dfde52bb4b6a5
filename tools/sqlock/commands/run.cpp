// sqlock run NAME [OPTIONS] -- COMMAND [ARGS...]: the main job. Takes the
// lock, runs COMMAND, renews the lease while it runs, forwards signals,
// releases the lock when COMMAND has ended, and exits with its status.
// Here: the help and run's own options (--splay, --retry, --notify...,
// --after); the options it shares with elect and their settings are in
// run/run_settings.cpp, the session's phases in run/run_session.cpp, its
// exit status in run/run_outcome.cpp.
#include <chrono>

#include "commands/commands.hpp"
#include "common/command_line.hpp"
#include "common/exit_codes.hpp"
#include "common/lock_format.hpp"
#include "common/option_values.hpp"
#include "run/after_chain.hpp"
#include "run/run_session.hpp"
#include "run/run_settings.hpp"

namespace sqlock_cli {
namespace {

const char* const run_usage = "NAME [NAME...] [OPTIONS] -- COMMAND [ARGS...]";

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
    "--after NAME[,NAME...] runs COMMAND only after the jobs it names: under the lock\n"
    "(after the --once-per decision), each one's newest run in the history must have\n"
    "succeeded and ended within --after-within DUR, or, without it, since the start\n"
    "of this --once-per window (\"once a day, after today's import\"), by the\n"
    "database's clock, whichever host ran it. Otherwise COMMAND is not run and sqlock\n"
    "exits 0, saying which job failed last, is still running or has no recent success\n"
    "(a line unless --quiet when one failed, else with --verbose), and records the\n"
    "skip in the history as after_failed or after_pending. With --wait, a job still\n"
    "running is waited for within the wait, the lock held meanwhile.\n"
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

void add_run_options(cxxopts::Options& options, const std::string& group) {
    add_job_options(options, group, group);
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

using std::chrono::milliseconds;

// run's own options: --splay, --retry and the --notify family, into `s`.
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

RunSettings parse_settings(const Invocation& inv) {
    RunSettings s = parse_run_settings(inv, "run", usage_line("run", run_usage));
    parse_cron_settings(inv.options, s);
    parse_after_settings(inv.options, s);
    return s;
}

int run_run(Invocation& inv) {
    return run_guarded(inv, parse_settings);
}

}  // namespace

Command run_command() {
    return {"run",
            run_usage,
            "run COMMAND while holding lock NAME (several: all at once)",
            std::string(run_details) + "\n" + exit_code_help(),
            add_run_options,
            run_run,
            true};
}

}  // namespace sqlock_cli
