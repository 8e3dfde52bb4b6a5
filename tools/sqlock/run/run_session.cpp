#include "run/run_session.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <system_error>
#include <thread>
#include <utility>

#include "common/database.hpp"
#include "common/local_windows.hpp"
#include "common/lock_format.hpp"
#include "common/output.hpp"
#include "common/signal_name.hpp"
#include "run/after_chain.hpp"
#include "run/notify.hpp"
#include "run/process_tree.hpp"
#include "text.hpp"

namespace sqlock_cli {
namespace {

using std::chrono::milliseconds;

nlohmann::ordered_json run_end_json(const sqlock::RunEnd& end) {
    nlohmann::ordered_json j = {{"outcome", sqlock::to_string(end.outcome)}};
    j["exit_status"] = end.exit_status ? nlohmann::ordered_json(*end.exit_status) : nullptr;
    j["signal"] = end.signal ? nlohmann::ordered_json(signal_name(*end.signal)) : nullptr;
    return j;
}

// How an attempt ended, for the retry's line: "exited 3", "was killed by SIGSEGV".
std::string describe_status(int status) {
    if (WIFEXITED(status)) return "exited " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) return "was killed by " + signal_name(WTERMSIG(status));
    return "failed";
}

// Why renewals fail, as a word for the JSON event: "read_only",
// "unavailable" (refused, broken, no answer), "no_answer" (the renewal under
// way has not answered), or the error's category.
std::string renewal_cause(const std::optional<sqlock::error>& failure) {
    if (!failure) return "no_answer";
    if (failure->read_only()) return "read_only";
    if (failure->category() == sqlock::errc::connection) return "unavailable";
    return sqlock::to_string(failure->category());
}

// The same for people.
std::string renewal_cause_text(const std::optional<sqlock::error>& failure) {
    if (!failure) return "the database did not answer in time";
    if (failure->read_only()) return "the database is read-only";
    if (failure->category() == sqlock::errc::connection)
        return "the database cannot be reached or does not answer";
    return std::string("renewing fails (") + sqlock::to_string(failure->category()) + ")";
}

// The longest pause between two tries of a step that meets an unavailable
// database (through_obstacles).
constexpr milliseconds longest_backoff{1000};

// Runs `step` and, while it fails because the database is unavailable for
// now (sqlock::error::unavailable(): a failover, a restart, a read-only
// spell), again, backing off from 100 ms doubling to 1 s with jitter, as
// the library's wait does, until `until()` has passed (then, or on any
// other failure, the error stands). `doing` ("releasing lock ...") and the
// first obstacle go to the log, once.
template <typename Step, typename Until>
auto through_obstacles(const EventLog& log, const std::string& doing, Until&& until, Step&& step)
    -> decltype(step()) {
    using clock = std::chrono::steady_clock;
    milliseconds backoff{100};
    std::mt19937 jitter{std::random_device{}()};
    for (bool told = false;; told = true) {
        try {
            return step();
        } catch (const sqlock::error& e) {
            const auto pause = milliseconds(std::uniform_int_distribution<std::int64_t>(
                backoff.count() / 2, backoff.count())(jitter));
            if (!e.unavailable() || clock::now() + pause >= until()) throw;
            if (!told)
                log.event(
                    event_level::warning, "waiting_through",
                    std::string("waiting through: ") +
                        (e.read_only() ? "the database is read-only"
                                       : "the database cannot be reached or does not answer") +
                        " while " + doing + "; trying again: " + e.what(),
                    {{"cause", e.read_only() ? "read_only" : "unavailable"}, {"step", doing}});
            std::this_thread::sleep_for(pause);
            backoff = std::min(backoff * 2, longest_backoff);
        }
    }
}

// What --notify-output keeps of the job's output.
constexpr std::size_t output_tail_limit = 64 * 1024;

}  // namespace

/// A way out before the job runs, or when it could not be started: the
/// ending leave_early() reports after releasing the lock (its arguments for
/// EventLog::ending), and how a failed release is told.
struct RunSession::EarlyExit {
    /// 0: nothing left to say after a good release (the --once-per window was
    /// done); a failed release is then the error.
    int code = exit_code::ok;
    event_level level = event_level::error;
    std::string event = "error";
    std::string message;
    nlohmann::ordered_json fields = nlohmann::ordered_json::object();
    bool quiet_ok = false;
    /// Put before the release's error when it is reported.
    std::string release_failed;
    /// The database was unavailable for longer than the lease lasted, while
    /// the wait had time left: the name is to be taken again, not given up.
    bool lease_lapsed = false;

    // The errors that were thrown as cli_error before the job started:
    // run_run's catch makes exactly this ending of them.
    static EarlyExit error(int code, std::string message) {
        EarlyExit exit;
        exit.code = code;
        exit.message = std::move(message);
        return exit;
    }
};

RunSession::RunSession(Invocation& inv, RunSettings& settings, EventLog& log)
    : inv_(inv),
      s_(settings),
      log_(log),
      // Opening connects nothing yet; it validates the URL and table, and
      // names the database for the messages below. Each round trip is
      // bounded by a sixth of the lease (1 s to 10 s) unless --db-timeout
      // says.
      locker_(open_locker(
          inv.global, false,
          std::clamp<sqlock::duration>(settings.request.options.expires / 6,
                                       std::chrono::seconds(1), std::chrono::seconds(10)))),
      db_(at_database(locker_.url())),
      job_(in_quotes(settings.command.front())) {
    log_.add_context("db", sqlock::text::printable(locker_.url()));
}

int RunSession::run() {
    int code = exit_code::ok;
    try {
        code = run_phases();
    } catch (const cli_error& e) {
        // Every phase has released the lock (or never had it) by the time
        // it throws: a notification never delays the next holder.
        if (start_notified_)
            notify("end", e.code());
        else if (!skip_reason_.empty() && s_.notify_skips)
            notify("skip", e.code());
        throw;
    }
    if (start_notified_)
        notify("end", code);
    else if (!skip_reason_.empty() && s_.notify_skips)
        notify("skip", code);
    return code;
}

int RunSession::run_phases() {
    acquire();
    std::optional<EarlyExit> exit = gate();
    while (exit && exit->lease_lapsed) {
        retake(*exit);
        exit = gate();
    }
    if (exit) return leave_early(*exit);
    if (std::optional<EarlyExit> exit = start()) return leave_early(*exit);
    SuperviseResult result = supervise();
    while (retry(result)) {
    }
    if (tail_) tail_->stop();
    return finish(result);
}

// --- acquire ---------------------------------------------------------------

// --splay: a random wait before asking for the lock, so that the hosts of a
// fleet whose cron fires on the same second do not all ask at once. Any
// forwarded signal ends it: nothing was taken, nothing runs.
void RunSession::splay() {
    if (s_.splay <= milliseconds::zero()) return;
    std::random_device seed;
    std::uniform_int_distribution<std::int64_t> pick(0, s_.splay.count() - 1);
    const milliseconds delay(pick(seed));
    log_.event(
        event_level::info, "splay",
        "waiting " + sqlock::format_duration(delay) + " (--splay " +
            sqlock::format_duration(s_.splay) + ") before asking for " +
            in_quotes(s_.request.name) + db_,
        {{"delay_seconds", seconds_value(delay)}, {"splay_seconds", seconds_value(s_.splay)}});
    const auto deadline = std::chrono::steady_clock::now() + delay;
    for (auto now = std::chrono::steady_clock::now(); now < deadline;
         now = std::chrono::steady_clock::now()) {
        const std::optional<siginfo_t> info =
            signals_.wait(std::chrono::ceil<milliseconds>(deadline - now));
        if (!info || info->si_signo == SIGCHLD) continue;
        const int signo = info->si_signo;
        skip_reason_ = "interrupted";
        throw log_.ending(event_level::warning, "skipped", exit_code::signal_base + signo,
                          "interrupted by " + signal_name(signo) + " during --splay; lock " +
                              in_quotes(s_.request.name) + " was not asked for" + db_,
                          {{"reason", "interrupted"}, {"signal", signal_name(signo)}});
    }
}

// --notify: each command in turn, with what happened in its environment.
// Its failure is said and changes nothing else.
void RunSession::notify(const std::string& event, int code) {
    std::vector<std::string> extra = {"SQLOCK_EVENT=" + event, "SQLOCK_NAME=" + s_.request.name,
                                      "SQLOCK_HOST=" + this_host()};
    if (lock_id_) extra.push_back("SQLOCK_ID=" + std::to_string(lock_id_));
    if (run_id_) extra.push_back("SQLOCK_RUN_ID=" + std::to_string(*run_id_));
    if (event == "start") extra.push_back("SQLOCK_OUTCOME=running");
    if (event == "skip") extra.push_back("SQLOCK_OUTCOME=" + skip_reason_);
    if (event != "start") extra.push_back("SQLOCK_EXIT=" + std::to_string(code));
    if (event == "end" && s_.retries > 0)
        extra.push_back("SQLOCK_ATTEMPTS=" + std::to_string(attempt_));
    std::string output_file;
    if (event == "end") {
        extra.push_back("SQLOCK_OUTCOME=" + outcome_);
        const auto ran = ended_ > first_started_
                             ? std::chrono::duration_cast<milliseconds>(ended_ - first_started_)
                             : milliseconds::zero();
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%.3f", ran.count() / 1000.0);
        extra.push_back(std::string("SQLOCK_DURATION=") + seconds);
        if (tail_) {
            output_file = write_temporary_file(tail_->text());
            if (output_file.empty())
                Output::error("could not write the job's output for --notify-output to a file");
            else
                extra.push_back("SQLOCK_OUTPUT_FILE=" + output_file);
        }
    }
    // --db, else $SQLOCK_DB (dropped by name too): both may hold it.
    const char* env_db = std::getenv("SQLOCK_DB");
    const std::vector<std::string> env =
        notify_environment(extra, {inv_.global.db, env_db ? env_db : ""});
    for (const std::string& command : s_.notify) {
        const NotifyResult r =
            run_notification(command, env, s_.notify_timeout, signals_.original_mask());
        nlohmann::ordered_json fields = {{"notify_event", event},
                                         {"command", sqlock::text::printable(command)}};
        fields["exit_status"] =
            r.exit_status >= 0 ? nlohmann::ordered_json(r.exit_status) : nullptr;
        if (r.ok)
            log_.event(event_level::info, "notified",
                       "--notify " + in_quotes(command) + " for the " + event + " event succeeded",
                       fields);
        else
            log_.event(event_level::error, "notify_failed",
                       "--notify " + in_quotes(command) + " for the " + event + " event " +
                           r.problem + "; the job's exit status and the lock are unchanged",
                       fields);
    }
    if (!output_file.empty()) ::unlink(output_file.c_str());
}

void RunSession::acquire() {
    // Before the lock: a mistyped command must not take (or, with
    // --min-hold, keep) a lock.
    try {
        path_ = resolve_executable(s_.command.front());
    } catch (const cli_error& e) {
        throw cli_error(e.code(), e.what() + std::string(" (lock ") + in_quotes(s_.request.name) +
                                      " not taken)" + db_);
    }
    splay();
    s_.request.options.on_lost = [lost = lost_](const std::string&, std::int64_t) { *lost = true; };
    s_.request.options.on_renewed_late = [&log = log_, db = db_](const std::string&,
                                                                 std::int64_t id, int failed,
                                                                 sqlock::duration left) {
        log.event(
            event_level::warning, "renewed_late",
            "renewed the lease of lock id " + std::to_string(id) +
                " late: " + std::to_string(failed) + " attempt" + (failed == 1 ? "" : "s") +
                " had failed, " + sqlock::format_duration(left) + " of it was left" + db,
            {{"id", id}, {"failed_attempts", failed}, {"lease_left_seconds", seconds_value(left)}});
    };
    // The progress line is for people (take()); JSON has an event when the
    // wait begins, and one for how it ended.
    s_.request.on_wait_start = [this](const sqlock::LockInfo* holder) {
        const AcquireRequest& r = s_.request;
        nlohmann::ordered_json fields;
        fields["holder"] = holder ? lock_json(*holder) : nullptr;
        fields["wait_seconds"] =
            r.wait_forever ? nullptr : nlohmann::ordered_json(seconds_value(r.wait));
        log_.event(event_level::info, "waiting",
                   std::string("waiting ") +
                       (r.wait_forever ? "without a time limit"
                                       : "up to " + sqlock::format_duration(r.wait)) +
                       " for " + (r.slots ? "semaphore " : "lock ") + in_quotes(r.name) + db_,
                   fields);
    };
    s_.request.on_obstacle = [this](const sqlock::error& e, sqlock::duration waited) {
        log_.event(event_level::warning, "waiting_through",
                   std::string("waiting through: ") +
                       (e.read_only() ? "the database is read-only"
                                      : "the database cannot be reached or does not answer") +
                       " (after waiting " + sqlock::format_duration(waited) + " for " +
                       in_quotes(s_.request.name) +
                       "); trying again until the wait ends: " + e.what(),
                   {{"cause", e.read_only() ? "read_only" : "unavailable"},
                    {"waited_seconds", seconds_value(waited)}});
    };
    asked_ = std::chrono::steady_clock::now();
    take();
}

// The lock itself, waiting up to what is left of --wait (wait_deadline()),
// and the event that says it was taken.
void RunSession::take() {
    const Output acquire_out = log_.json() ? Output(true, false) : inv_.out;
    try {
        const interruption_check interrupted = [this] { return signals_.take_pending(); };
        if (s_.request.leader_value)
            lock_.emplace(sqlock_cli::campaign(locker_, s_.request, acquire_out, interrupted));
        else if (s_.request.set.empty())
            lock_.emplace(sqlock_cli::acquire(locker_, s_.request, acquire_out, interrupted));
        else
            lock_.emplace(sqlock_cli::acquire_set(locker_, s_.request, acquire_out, interrupted));
    } catch (const sqlock::error& e) {
        if (e.category() != sqlock::errc::busy && e.category() != sqlock::errc::timeout) throw;
        skip_reason_ = e.category() == sqlock::errc::busy ? "busy" : "timeout";
        nlohmann::ordered_json fields = {{"reason", skip_reason_}};
        fields["holder"] = e.holder() ? lock_json(*e.holder()) : nullptr;
        throw log_.ending(event_level::notice, "skipped", s_.conflict_code, e.what(), fields,
                          /*quiet_ok=*/true);
    } catch (const cli_error& e) {
        if (e.code() <= exit_code::signal_base) throw;  // interrupted while waiting
        skip_reason_ = "interrupted";
        throw log_.ending(event_level::warning, "skipped", e.code(), e.what(),
                          {{"reason", "interrupted"},
                           {"signal", signal_name(e.code() - exit_code::signal_base)}});
    }
    // Computed now: a released Lock no longer answers questions.
    what_ = lock_->describe();
    lock_id_ = lock_->id();
    nlohmann::ordered_json fields;
    const std::vector<std::string> rows = lock_->lockstrings();
    fields["lockstring"] = sqlock::text::printable(rows.front());
    fields["id"] = lock_->id();
    fields["slot"] = lock_->single() ? lock_->single()->slot() : 0;
    if (!lock_->single()) {
        nlohmann::ordered_json names = nlohmann::ordered_json::array();
        for (const auto& name : rows) names.push_back(sqlock::text::printable(name));
        fields["lockstrings"] = names;
    }
    fields["expires"] = lock_->expires();
    fields["lease_seconds"] = seconds_value(s_.request.options.expires);
    log_.event(event_level::info, "acquired",
               "acquired " + what_ + ", lease " +
                   sqlock::format_duration(s_.request.options.expires) + " until " +
                   lock_->expires() + " UTC" + db_,
               fields);
}

// A lease that ran out while the steps before the job waited through an
// unavailable database (a failover longer than the lease): the job was not
// started and the row has expired, or will before anyone else may take it.
// The name is taken again with what is left of the wait, as a waiter would.
void RunSession::retake(const EarlyExit& why) {
    log_.event(event_level::warning, "retaking",
               "the lease of " + what_ + " ran out while the database could not be asked (" +
                   why.message + "); taking " + in_quotes(s_.request.name) +
                   " again within the wait" + db_,
               {{"id", lock_id_}});
    try {
        lock_->release();  // one try: the row frees itself anyway
    } catch (const std::exception&) {
    }
    lock_.reset();
    *lost_ = false;
    run_id_.reset();
    window_.reset();
    // The same deadline: asked again now, for what is left of the wait.
    if (!s_.request.wait_forever) {
        const auto deadline = wait_deadline();
        asked_ = std::chrono::steady_clock::now();
        s_.request.wait = std::max<sqlock::duration>(
            std::chrono::duration_cast<sqlock::duration>(deadline - asked_),
            sqlock::duration::zero());
    }
    take();
}

// --- gate ------------------------------------------------------------------

// A step before the job failed with `e` (`context` says which, and that the
// job was not started). When the database was unavailable for as long as
// the lease lasted but not yet for the whole wait, the run takes the name
// again (retake()).
RunSession::EarlyExit RunSession::not_started(const sqlock::error& e,
                                              const std::string& context) const {
    EarlyExit exit =
        EarlyExit::error(exit_code_for(e.category()), std::string(e.what()) + " (" + context + ")");
    exit.lease_lapsed = e.unavailable() && lock_->valid_until() < wait_deadline() &&
                        std::chrono::steady_clock::now() < wait_deadline();
    return exit;
}

std::optional<RunSession::EarlyExit> RunSession::gate() {
    // A signal that came while the lock was being taken (blocked until now)
    // means "stop": do not start the command for it to find on arrival.
    if (int signo = signals_.take_pending()) {
        EarlyExit exit;
        exit.code = exit_code::signal_base + signo;
        exit.level = event_level::warning;
        exit.event = "skipped";
        exit.message = "interrupted by " + signal_name(signo) + " before starting " + job_ +
                       "; released " + what_ + db_;
        exit.fields = {{"reason", "interrupted"}, {"signal", signal_name(signo)}};
        return exit;
    }

    // valid_until counts from when the acquisition was sent: one that waited
    // long for the database (SQLite's busy wait) has little of its lease
    // left to vouch for. Renew once first, so that the job is not started
    // only to be stopped at once.
    if (s_.request.options.heartbeat && s_.terminate_on_lost &&
        lock_->valid_until() - std::chrono::steady_clock::now() < s_.request.options.expires / 2) {
        try {
            through_obstacles(log_, "renewing " + what_ + " before starting " + job_,
                              before_start(), [&] { lock_->renew(); });
        } catch (const sqlock::error& e) {
            return not_started(e, "renewing before starting " + job_ + ", which was not started");
        }
    }
    return admit();
}

// The gate's round trips under the lock, in this order: the pause, the
// --once-per decision (it names the window the record is for), the start
// of the run record.
std::optional<RunSession::EarlyExit> RunSession::admit() {
    // The pause, under the lock, where the once-per decision is made: a
    // pause issued while another host ran the job lets that run finish,
    // and every run that takes the lock after it sees it. A paused window
    // is not run and not marked done. If the pause cannot be read, the job
    // does not run: a pause must not be missed for a database hiccup.
    //
    // Without --once-per the pause is read and the start recorded in one
    // round trip. With it, the window is decided between the two (after the
    // pause, before the record), so they stay apart.
    // A set's run is not recorded (the history records one lock's runs);
    // the pause of each of its names is read.
    const sqlock::Lock* single = lock_->single();
    if (s_.history && !s_.once_per && s_.after.empty() && single) {
        try {
            sqlock::RunStartOutcome started = through_obstacles(
                log_, "recording the start of the run", before_start(),
                [&] { return history_.start_run_unless_paused(*single, run_start()); });
            if (started.pause) return paused(*started.pause);
            run_id_ = started.run_id;
            said_recording();
            return std::nullopt;
        } catch (const sqlock::error& e) {
            // Which half failed is not known: read the pause alone, so
            // that a failed record does not stop the job (nothing depends
            // on it without --once-per) and a pause is still never missed.
            if (std::optional<EarlyExit> exit = check_pause()) {
                // Both failed: the first error may be the one that explains.
                if (exit->code != exit_code::paused)
                    exit->message += "; before that: " + std::string(e.what());
                return exit;
            }
            Output::error("not recording this run in the history: " + std::string(e.what()));
            return std::nullopt;
        }
    }

    if (std::optional<EarlyExit> exit = check_pause()) return exit;
    if (std::optional<EarlyExit> exit = decide_window()) return exit;
    if (std::optional<EarlyExit> exit = decide_after()) return exit;

    if (!s_.history || !single) return std::nullopt;
    try {
        run_id_ = through_obstacles(log_, "recording the start of the run", before_start(),
                                    [&] { return history_.start_run(*single, run_start()); });
        said_recording();
    } catch (const sqlock::error& e) {
        if (window_)
            return not_started(e, "recording the start of the run; " + job_ + " was not started");
        // Without --once-per nothing depends on the record: the job runs,
        // and the operator hears why it is not in the history.
        Output::error("not recording this run in the history: " + std::string(e.what()));
    }
    return std::nullopt;
}

std::optional<RunSession::EarlyExit> RunSession::check_pause() {
    std::optional<sqlock::PauseInfo> pause;
    try {
        for (const std::string& name :
             lock_->single() ? std::vector<std::string>{s_.request.name} : s_.request.set)
            if ((pause = through_obstacles(log_, "checking whether it is paused", before_start(),
                                           [&] { return pauses_.find(name); })))
                break;
    } catch (const sqlock::error& e) {
        return not_started(e, "checking whether it is paused; " + job_ + " was not started");
    }
    if (pause) return paused(*pause);
    return std::nullopt;
}

RunSession::EarlyExit RunSession::paused(const sqlock::PauseInfo& pause) const {
    EarlyExit exit;
    exit.code = exit_code::paused;
    exit.level = event_level::notice;
    exit.event = "skipped";
    exit.message = describe_pause(pause) + "; not running " + job_ + db_;
    exit.fields = {{"reason", "paused"}, {"pause", pause_json(pause)}};
    exit.quiet_ok = true;
    exit.release_failed = "the job is paused, but releasing the lock failed: ";
    return exit;
}

sqlock::RunStart RunSession::run_start() const {
    sqlock::RunStart start;
    start.program = s_.program;
    if (window_) start.window_start_ms = window_->start_ms;
    return start;
}

void RunSession::said_recording() const {
    inv_.out.detail(
        "recording run " + std::to_string(*run_id_) + " of " + in_quotes(s_.request.name) +
        (window_ ? " for window " + window_->start + " UTC" + local_window_text() : std::string()) +
        db_);
}

// " (2026-03-29 00:00:00 CET to 2026-03-30 00:00:00 CEST)" with --tz, else "".
std::string RunSession::local_window_text() const {
    if (!s_.tz || !window_) return {};
    return " (" + local_text(s_.tz, window_->start) + " to " + local_text(s_.tz, window_->end) +
           ")";
}

// The --once-per decision's round trips (decide_window()).
void RunSession::decide_window_now() {
    if (s_.tz) {
        const auto length = std::chrono::duration_cast<milliseconds>(*s_.once_per);
        const auto offset = std::chrono::duration_cast<milliseconds>(s_.once_per_offset);
        window_ = history_.once_per_window(
            *lock_->single(),
            [&](std::int64_t now) { return local_window(s_.tz, length, offset, now); },
            s_.once_per_any_outcome);
    } else {
        window_ = history_.once_per_window(*lock_->single(), *s_.once_per, s_.once_per_offset,
                                           s_.once_per_any_outcome);
    }
}

std::optional<RunSession::EarlyExit> RunSession::decide_window() {
    // The once-per decision, under the lock: a run of this window that
    // counts was recorded (before its lock was released) by whoever held it.
    if (!s_.once_per) return std::nullopt;
    try {
        through_obstacles(log_, "deciding on the --once-per window", before_start(),
                          [&] { decide_window_now(); });
    } catch (const sqlock::error& e) {
        return not_started(e, "deciding on the --once-per window; " + job_ + " was not started");
    }
    if (window_->done) {
        skip_reason_ = "window_done";
        const sqlock::RunRecord& by = *window_->done_by;
        log_.event(event_level::info, "skipped",
                   "window " + window_->start + " to " + window_->end + " UTC" +
                       local_window_text() + " of " + in_quotes(s_.request.name) +
                       " is done: run " + std::to_string(by.id) + " " +
                       sqlock::to_string(by.outcome) + " on " + sqlock::text::printable(by.host) +
                       " (started " + by.started + " UTC); not running " + job_ + db_,
                   {{"reason", "window_done"},
                    {"window_start", window_->start},
                    {"window_end", window_->end},
                    {"done_by", run_json(by)},
                    {"exit_code", exit_code::ok}});
        EarlyExit exit;
        exit.release_failed = "the window was done, but releasing the lock failed: ";
        return exit;
    }
    return std::nullopt;
}

// --after: under the lock, after the window (a done window needs no look),
// the history says whether each job it runs after succeeded last, recently
// enough. A job still running is waited for within --wait, the lock held
// (the heartbeat renews it), polling with a growing interval; a failed or
// missing one is not. Otherwise the job is skipped like a done window:
// exit 0, the reason said, and the skip recorded in the history.
std::optional<RunSession::EarlyExit> RunSession::decide_after() {
    if (s_.after.empty()) return std::nullopt;
    const auto deadline = wait_deadline();
    milliseconds pause(100);
    bool said_waiting = false;
    for (;;) {
        sqlock::Predecessors p;
        try {
            p = through_obstacles(log_, "reading the runs of the jobs it runs after",
                                  before_start(), [&] { return read_predecessors(); });
        } catch (const sqlock::error& e) {
            return EarlyExit::error(exit_code_for(e.category()),
                                    std::string(e.what()) + " (reading the runs of the jobs " +
                                        job_ + " runs after; it was not started)");
        }
        if (p.satisfied()) {
            inv_.out.detail("every job " + in_quotes(s_.request.name) + " runs after (" +
                            after_list(s_.after) + ") succeeded since " + p.since + " UTC" + db_);
            return std::nullopt;
        }
        bool failed = false, running = false;
        for (const auto& j : p.jobs) {
            failed |= j.state == sqlock::predecessor_state::failed;
            running |= j.state == sqlock::predecessor_state::running;
        }
        const auto now = std::chrono::steady_clock::now();
        if (failed || !running || now >= deadline) return after_skip(p);
        if (!said_waiting) {
            said_waiting = true;
            log_.event(
                event_level::info, "waiting_for_after",
                "waiting for " + describe_predecessors(p, true) + " to end, holding " + what_ + db_,
                {{"id", lock_id_}, {"predecessors", predecessors_json(p)}});
        }
        if (*lost_)
            return EarlyExit::error(exit_code::lost, "lost " + what_ + " while waiting for " +
                                                         describe_predecessors(p, true) + "; " +
                                                         job_ + " was not started" + db_);
        const auto wake = std::min(deadline, now + pause);
        const std::optional<siginfo_t> info =
            signals_.wait(std::chrono::ceil<milliseconds>(wake - now));
        if (info && info->si_signo != SIGCHLD) {
            EarlyExit exit;
            exit.code = exit_code::signal_base + info->si_signo;
            exit.level = event_level::warning;
            exit.event = "skipped";
            exit.message = "interrupted by " + signal_name(info->si_signo) +
                           " while waiting for the jobs " + job_ + " runs after; released " +
                           what_ + db_;
            exit.fields = {{"reason", "interrupted"}, {"signal", signal_name(info->si_signo)}};
            return exit;
        }
        pause = std::min<milliseconds>(pause * 3 / 2, milliseconds(5000));
    }
}

sqlock::Predecessors RunSession::read_predecessors() {
    if (s_.after_within) return history_.predecessors(s_.after, *s_.after_within);
    // Since the start of the --once-per window decided just before.
    const std::int64_t start = window_->start_ms;
    return history_.predecessors(s_.after, [start](std::int64_t) { return start; });
}

RunSession::EarlyExit RunSession::after_skip(const sqlock::Predecessors& p) {
    bool failed = false;
    for (const auto& j : p.jobs) failed |= j.state == sqlock::predecessor_state::failed;
    const sqlock::run_outcome outcome =
        failed ? sqlock::run_outcome::after_failed : sqlock::run_outcome::after_pending;
    skip_reason_ = "after";
    std::optional<std::int64_t> skip_id;
    try {
        sqlock::RunStart start;
        start.program = s_.program;
        skip_id = history_.record_skip(*lock_->single(), outcome, start);
    } catch (const sqlock::error& e) {
        Output::error("not recording the skip in the history: " + std::string(e.what()));
    }
    nlohmann::ordered_json fields = {{"reason", "after"},
                                     {"outcome", sqlock::to_string(outcome)},
                                     {"after_since", p.since},
                                     {"predecessors", predecessors_json(p)}};
    fields["run_id"] = skip_id ? nlohmann::ordered_json(*skip_id) : nullptr;
    if (window_) {
        fields["window_start"] = window_->start;
        fields["window_end"] = window_->end;
    }
    fields["exit_code"] = exit_code::ok;
    log_.event(failed ? event_level::notice : event_level::info, "skipped",
               in_quotes(s_.request.name) + " runs after " + after_list(s_.after) + ": " +
                   describe_predecessors(p, false) + "; not running " + job_ +
                   (skip_id ? " (recorded as " + std::string(sqlock::to_string(outcome)) + ")"
                            : std::string()) +
                   db_,
               fields);
    EarlyExit exit;
    exit.release_failed = "the job was skipped (--after), but releasing the lock failed: ";
    return exit;
}

// The one place that releases the lock before the job's end. The release
// comes first: the reason for not running is reported after anything the
// release said. A failed release is reported once, then the lock detached:
// its destructor would retry the release and report its failure a second
// time; the row ends with its lease. (A release that found the lock lost
// has let go of it already: nothing to detach.)
int RunSession::leave_early(const EarlyExit& exit) {
    if (exit.event == "skipped") skip_reason_ = exit.fields.value("reason", "");
    std::optional<std::pair<std::string, int>> failed;  // message, exit code
    try {
        through_obstacles(log_, "releasing " + what_, while_leased(), [&] { lock_->release(); });
    } catch (const sqlock::error& e) {
        failed.emplace(e.what(), exit_code_for(e.category()));
    } catch (const std::exception& e) {
        failed.emplace(e.what(), exit_code::internal);
    }
    if (failed) {
        if (lock_->active()) lock_->detach();
        const std::string message = exit.release_failed + failed->first;
        if (exit.code == exit_code::ok)
            throw log_.ending(event_level::error, "error", failed->second, message);
        // The reason for not starting is the error: the release's failure is
        // said before it.
        Output::error(message);
    }
    if (exit.code == exit_code::ok) return exit_code::ok;
    throw log_.ending(exit.level, exit.event, exit.code, exit.message, exit.fields, exit.quiet_ok);
}

// --- supervise -------------------------------------------------------------

std::optional<RunSession::EarlyExit> RunSession::start() {
    // Before the job: a start ping that arrives after the end ping would
    // read as a job that is still running.
    if (!s_.notify.empty()) {
        notify("start", exit_code::ok);
        start_notified_ = true;
    }
    // The job's background processes stay ours (see process_tree.hpp).
    become_subreaper();
    if (s_.notify_output) tail_.emplace(output_tail_limit);
    std::optional<EarlyExit> exit = spawn_job();
    first_started_ = started_;
    return exit;
}

// One attempt of the job: started with the lock in its environment.
std::optional<RunSession::EarlyExit> RunSession::spawn_job() {
    std::vector<std::string> extra_env = lock_->environment();
    if (window_) extra_env.push_back("SQLOCK_WINDOW_START=" + window_->start);
    if (s_.retries > 0) extra_env.push_back("SQLOCK_ATTEMPT=" + std::to_string(attempt_));
    const std::vector<std::string> env = command_environment(extra_env);
    try {
        const auto spawn = [&] {
            child_.emplace(ChildProcess::spawn(path_, s_.command, env, signals_.original_mask()));
        };
        if (tail_)
            tail_->spawn(spawn);
        else
            spawn();
    } catch (const cli_error& e) {
        return EarlyExit::error(e.code(), e.what() + db_);
    } catch (const std::system_error& e) {
        return EarlyExit::error(exit_code::internal,
                                std::string(e.what()) + "; " + job_ + " was not started" + db_);
    }
    started_ = std::chrono::steady_clock::now();
    nlohmann::ordered_json fields = {
        {"id", lock_id_}, {"command", s_.program}, {"child_pid", static_cast<long>(child_->pid())}};
    fields["run_id"] = run_id_ ? nlohmann::ordered_json(*run_id_) : nullptr;
    fields["window_start"] = window_ ? nlohmann::ordered_json(window_->start) : nullptr;
    fields["attempt"] = attempt_;
    log_.event(event_level::info, "started",
               "started " + job_ + " (pid " + std::to_string(child_->pid()) + ")" +
                   (attempt_ > 1 ? ", attempt " + std::to_string(attempt_) : std::string()) +
                   " under " + what_ + db_,
               fields);
    return std::nullopt;
}

// --retry: after an attempt that failed by itself, under the same lock
// (the heartbeat goes on): record the attempt's end, wait, record and
// start the next one. False when there is none (the result stands, for finish()):
// no retries left, sqlock stopped the job, a signal came, the lock is lost
// or can no longer be vouched for, or recording failed where it matters.
bool RunSession::retry(SuperviseResult& result) {
    if (attempt_ > s_.retries || !retryable(result)) return false;
    const sqlock::RunEnd end = run_end(result);
    std::random_device seed;
    const milliseconds delay =
        retry_backoff(s_.retry_delay, attempt_, std::uniform_real_distribution<double>(0, 1)(seed));
    nlohmann::ordered_json fields = {{"id", lock_id_}, {"attempt", attempt_}};
    fields.update(run_end_json(end));
    fields["delay_seconds"] = seconds_value(delay);
    log_.event(event_level::notice, "retrying",
               job_ + " " + describe_status(result.status) + " (attempt " +
                   std::to_string(attempt_) + " of " + std::to_string(s_.retries + 1) +
                   "); running it again in " + sqlock::format_duration(delay) + " under " + what_ +
                   db_,
               fields);
    if (run_id_) {
        try {
            // Recorded lost: the lease ran out unnoticed (no heartbeat).
            if (history_.finish_run(*lock_->single(), *run_id_, end) != end.outcome) {
                run_id_.reset();
                Output::error("not retrying " + job_ + ": " + what_ + " was no longer held" + db_);
                return false;
            }
        } catch (const sqlock::error& e) {
            Output::error("not retrying: recording the end of attempt " + std::to_string(attempt_) +
                          " failed: " + e.what());
            return false;
        }
        run_id_.reset();
    }
    if (!await_retry(delay)) return false;
    ++attempt_;
    if (s_.history && lock_->single()) {
        try {
            run_id_ = history_.start_run(*lock_->single(), run_start());
            said_recording();
        } catch (const sqlock::error& e) {
            // A --once-per window is decided by what is recorded: an attempt
            // that could not be must not run.
            Output::error((window_ ? "not retrying: " : "not recording this attempt: ") +
                          std::string("recording its start failed: ") + e.what());
            if (window_) return false;
        }
    }
    if (std::optional<EarlyExit> failed = spawn_job()) {
        Output::error(failed->message);
        result = SuperviseResult{};
        result.status = W_EXITCODE(failed->code & 0xff, 0);
        return false;
    }
    result = supervise();
    return true;
}

// The wait between attempts: a forwarded signal ends it (the last attempt's
// status stands), and so does a lock that is lost or can no longer be
// vouched for long enough to start another attempt.
bool RunSession::await_retry(milliseconds delay) {
    const auto deadline = std::chrono::steady_clock::now() + delay;
    for (auto now = std::chrono::steady_clock::now();; now = std::chrono::steady_clock::now()) {
        if (*lost_) {
            Output::error("not retrying " + job_ + ": " + what_ + " was lost" + db_);
            return false;
        }
        if (lock_->valid_until() - now < s_.margin + s_.grace) {
            Output::error("not retrying " + job_ + ": the lease of " + what_ +
                          " ends too soon for another attempt (it could not be renewed)" + db_);
            return false;
        }
        if (now >= deadline) return true;
        const std::optional<siginfo_t> info = signals_.wait(std::min<milliseconds>(
            std::chrono::ceil<milliseconds>(deadline - now), milliseconds(200)));
        if (info && info->si_signo != SIGCHLD) {
            log_.event(
                event_level::warning, "retry_cancelled",
                "not retrying " + job_ + ": interrupted by " + signal_name(info->si_signo) + db_,
                {{"id", lock_id_}, {"signal", signal_name(info->si_signo)}});
            return false;
        }
    }
}

std::string RunSession::lost_on() const {
    return s_.terminate_on_lost ? "term" : "ignore";
}

SuperviseResult RunSession::supervise() {
    SupervisePolicy policy;
    policy.terminate_on_lost = s_.terminate_on_lost;
    policy.fence = s_.terminate_on_lost && s_.request.options.heartbeat;
    policy.grace = s_.grace;
    policy.margin = s_.margin;
    policy.valid_until = [this] { return lock_->valid_until(); };
    if (s_.max_runtime) policy.deadline = started_ + *s_.max_runtime;
    bool timed_out = false;  // the fencing event then finds the job stopping
    SuperviseEvents events;
    events.lost = [this] {
        log_.event(event_level::error, "lost",
                   "lost " + what_ + " while " + job_ +
                       " was running: it was taken over or force-released, or its lease ran "
                       "out unrenewed; " +
                       (s_.terminate_on_lost ? "terminating the command and its processes"
                                             : "letting the command finish (--on-lost=ignore)") +
                       db_,
                   {{"id", lock_id_}, {"on_lost", lost_on()}});
    };
    events.fencing = [this, &timed_out] {
        // What the renewals met: the heartbeat keeps the last one's error.
        const std::optional<sqlock::error> failure = lock_->renewal_failure();
        nlohmann::ordered_json fields = {{"id", lock_id_},
                                         {"kill_grace_seconds", seconds_value(s_.grace)}};
        fields["cause"] = renewal_cause(failure);
        fields["last_error"] = failure ? nlohmann::ordered_json(failure->what()) : nullptr;
        log_.event(event_level::error, "fencing",
                   "cannot renew " + what_ + ": " + renewal_cause_text(failure) + "; " +
                       (timed_out ? job_ + ", stopping after its --max-runtime, gets SIGKILL "
                                           "before its lease can run out"
                                  : "stopping " + job_ +
                                        " before its lease can run out (SIGTERM now, SIGKILL "
                                        "after " +
                                        sqlock::format_duration(s_.grace) + ")") +
                       db_ + (failure ? "; the last renewal: " + std::string(failure->what()) : ""),
                   fields);
    };
    events.timed_out = [this, &timed_out] {
        timed_out = true;
        log_.event(event_level::error, "timed_out",
                   job_ + " has run for its --max-runtime of " +
                       sqlock::format_duration(*s_.max_runtime) +
                       "; stopping it and every process it started (SIGTERM now, SIGKILL after " +
                       sqlock::format_duration(s_.grace) + ")" + db_,
                   {{"id", lock_id_},
                    {"max_runtime_seconds", seconds_value(*s_.max_runtime)},
                    {"kill_grace_seconds", seconds_value(s_.grace)}});
    };
    events.waiting_for = [this](int n) {
        log_.event(event_level::info, "waiting_for_processes",
                   job_ + " has ended; keeping " + what_ + " until the " + std::to_string(n) +
                       " process" + (n == 1 ? "" : "es") + " it started have ended too" + db_,
                   {{"id", lock_id_}, {"processes", n}});
    };
    SuperviseResult result = sqlock_cli::supervise(*child_, signals_, *lost_, policy, events);
    ended_ = std::chrono::steady_clock::now();
    return result;
}

// --- finish ----------------------------------------------------------------

int RunSession::finish(const SuperviseResult& result) {
    const sqlock::RunEnd end = run_end(result);
    {
        nlohmann::ordered_json fields = {{"id", lock_id_}};
        fields.update(run_end_json(end));
        fields["duration_seconds"] = seconds_value(
            std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - started_));
        fields["leftovers"] = result.leftovers;
        // info whatever the outcome: in text, the command's failure is its
        // own to report (sqlock exits with its status).
        log_.event(event_level::info, "exited",
                   job_ + " has ended (" + sqlock::to_string(end.outcome) + ")" + db_, fields);
    }
    if (result.leftovers)
        Output::error("some processes of the job did not die after SIGKILL; leaving them" + db_);

    outcome_ = sqlock::to_string(end.outcome);
    RunOutcome outcome;
    outcome.wait_status = result.status;
    outcome.fenced = result.fenced;
    outcome.timed_out = result.timed_out;
    outcome.lost_while_running = result.lost;
    outcome.terminate_on_lost = s_.terminate_on_lost;
    if (result.fenced) {
        // The lease could not be renewed: the database may be out of reach,
        // so do not wait for it. The row expires by itself; releasing it
        // could not make anyone's start earlier than that by much. The run
        // reads as lost in the history once the lease has run out.
        lock_->detach();
        return exit_status(outcome);
    }
    std::string record_error;  // printed after the release: one line if both fail
    record_end(end, outcome, record_error);
    release_at_end(end, outcome, record_error);
    if (outcome.lost_at_record || outcome.lost_at_release) outcome_ = "lost";
    return exit_status(outcome);
}

// The outcome is recorded before the release: whoever takes the lock next
// finds it (what makes --once-per hold across hosts).
void RunSession::record_end(const sqlock::RunEnd& end, RunOutcome& outcome,
                            std::string& record_error) {
    if (!run_id_) return;
    const auto lease_end = lock_->valid_until();
    try {
        const sqlock::run_outcome recorded =
            through_obstacles(log_, "recording the end of the run", while_leased(),
                              [&] { return history_.finish_run(*lock_->single(), *run_id_, end); });
        outcome.lost_at_record = recorded != end.outcome;
        // A lock lost unnoticed (no heartbeat) is recorded lost; the
        // release below finds the loss too and says so.
        inv_.out.detail(
            "recorded run " + std::to_string(*run_id_) + " as " + sqlock::to_string(recorded) +
            (recorded != end.outcome ? ": " + what_ + " was no longer held when " + job_ + " ended"
                                     : std::string()) +
            db_);
    } catch (const sqlock::error& e) {
        record_error = "recording that in the run history failed: " + std::string(e.what()) +
                       // A statement that got no answer may still have been
                       // applied (delivered late): then the window is done.
                       (s_.once_per ? "; the window may be left open, and run again" : "");
        // The database unavailable for the rest of the lease: without
        // --once-per nothing depends on the record (the history shows the
        // run lost once its lease has run out), so it is said, and the job's
        // status stands, as when the start could not be recorded.
        if (!s_.once_per && lapsed_unavailable(e, lease_end))
            record_error += "; the history shows the run as lost";
        else
            outcome.record_failure = exit_code_for(e.category());
    }
}

// True when `e` says the database is unavailable and the lease that ends
// at `lease_end` runs out before the next try would come: what a release is
// for happens by itself then, the row stops counting (it is taken over or
// reaped like any expired one).
bool RunSession::lapsed_unavailable(const sqlock::error& e,
                                    std::chrono::steady_clock::time_point lease_end) const {
    return e.unavailable() && std::chrono::steady_clock::now() + longest_backoff >= lease_end;
}

void RunSession::release_at_end(const sqlock::RunEnd& end, RunOutcome& outcome,
                                std::string& record_error) {
    const std::string ended = job_ + " has ended (" + sqlock::to_string(end.outcome) + ")";
    const auto lease_end = lock_->valid_until();
    try {
        // While the lease it releases runs, a release that meets an
        // unavailable database tries again: once the database is back, the
        // name is free at once rather than when the lease ends.
        through_obstacles(log_, "releasing " + what_, while_leased(), [&] { lock_->release(); });
        const bool kept = s_.request.options.min_hold > sqlock::duration::zero();
        log_.event(event_level::info, "released",
                   kept ? "released " + what_ + "; its row stays until " +
                              sqlock::format_duration(s_.request.options.min_hold) +
                              " after it was taken (--min-hold)" + db_
                        : "released " + what_ + db_,
                   {{"id", lock_id_}, {"min_hold", kept}});
    } catch (const sqlock::error& e) {
        if (e.category() == sqlock::errc::lost) {
            if (!outcome.lost_while_running)  // found only now (no heartbeat)
                log_.event(event_level::error, "lost", e.what(),
                           {{"id", lock_id_}, {"on_lost", lost_on()}});
            outcome.lost_at_release = true;
        } else if (lapsed_unavailable(e, lease_end)) {
            // Unavailable until the lease ran out: the lock freed itself
            // then, which is what the release was for.
            log_.event(event_level::warning, "released_by_expiry",
                       ended + "; the database could not be reached to release " + what_ +
                           " while its lease lasted, so the lock frees itself as it ends" +
                           (record_error.empty() ? std::string() : " (" + record_error + ")") +
                           "; the last attempt: " + e.what(),
                       {{"id", lock_id_}});
            record_error.clear();
            lock_->detach();
        } else {
            Output::error(
                "the command has ended, but releasing the lock failed: " + std::string(e.what()) +
                (record_error.empty() ? std::string() : " (and " + record_error + ")"));
            record_error.clear();
            outcome.release_failure = exit_code_for(e.category());
            // Reported once: the Lock's destructor would retry the release
            // and report its failure a second time. The row ends with its
            // lease.
            lock_->detach();
        }
    }
    if (!record_error.empty()) Output::error(ended + ", but " + record_error);
    // The lease ran out unrenewed and nobody took the lock over: the
    // release went through, but the run cannot count as done.
    if (outcome.lost_at_record && !outcome.lost_while_running && !outcome.lost_at_release) {
        log_.event(event_level::error, "lost",
                   "recorded run " + std::to_string(*run_id_) + " as lost, not " +
                       sqlock::to_string(end.outcome) + ": the lease of " + what_ +
                       " had run out when " + job_ + " ended" + db_,
                   {{"id", lock_id_}, {"on_lost", lost_on()}});
    }
}

std::string this_host() {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
    return sqlock::text::printable(name);
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
