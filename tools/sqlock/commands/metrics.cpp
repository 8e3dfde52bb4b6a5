// sqlock metrics: the lock table and its run history in the Prometheus text
// exposition format (version 0.0.4) on stdout, for node_exporter's textfile
// collector. Counted by the database (aggregate queries), so the cost does
// not grow with the history kept, only with the number of job names.
#include <algorithm>
#include <cstdio>
#include <map>

#include "commands/commands.hpp"
#include "common/command_line.hpp"
#include "common/database.hpp"
#include "common/exit_codes.hpp"
#include "common/lock_format.hpp"
#include "common/option_values.hpp"
#include "sqlock/pauses.hpp"
#include "sqlock/run_history.hpp"

namespace sqlock_cli {
namespace {

const char* const metrics_usage = "[--max-names N]";

const char* const metrics_details =
    "Prints, in the Prometheus text format, per job (NAME, from the run history):\n"
    "  sqlock_job_last_success_timestamp_seconds  when the last success ended (Unix time)\n"
    "  sqlock_job_last_run_duration_seconds       how long the last finished run took\n"
    "  sqlock_job_last_outcome{outcome=...}       1 for the last finished run's outcome, else 0\n"
    "  sqlock_job_last_run_attempt                its attempt (run --retry; 1 if not retried)\n"
    "  sqlock_job_running                         runs in progress\n"
    "  sqlock_job_runs{outcome=...}               runs in the history kept, by outcome (a\n"
    "                                             retried job: one per attempt)\n"
    "  sqlock_job_paused_timestamp_seconds        since when it is paused (sqlock pause)\n"
    "  sqlock_job_blocked                         1 when skipped since its last run because a\n"
    "                                             job it runs after failed (run --after)\n"
    "per lock name (live rows and the line of waiters; at most --max-names names, the\n"
    "ones with waiters (the longest waited first) and the oldest holders first, the rest\n"
    "summed in series without a name label):\n"
    "  sqlock_lock_holders                        live holders (a semaphore: slots in use)\n"
    "  sqlock_lock_holder_age_seconds             since the oldest holder took it\n"
    "  sqlock_lock_holder_seconds_left            until the first holder's lease ends\n"
    "  sqlock_lock_waiters                        callers waiting in line\n"
    "  sqlock_lock_oldest_waiter_seconds          since the first of them joined the line (not\n"
    "                                             for a queue made by an older sqlock until\n"
    "                                             `sqlock init`)\n"
    "  sqlock_leader_fencing_id                   an election's live leader's fencing id\n"
    "  sqlock_leader_age_seconds                  since that leader took the lead\n"
    "and for the table: sqlock_lock_names (names seen), sqlock_locks_held,\n"
    "sqlock_locks_expired (waiting for `reap`).\n"
    "Every series has the labels table and (per job or lock) name. Write it atomically for\n"
    "node_exporter's textfile collector, e.g. every minute from cron:\n"
    "  sqlock metrics > DIR/sqlock.prom.$$ && mv DIR/sqlock.prom.$$ DIR/sqlock.prom\n";

// A label value as the exposition format wants it: backslash, double quote
// and line feed escaped; bytes that are not UTF-8 (rows other programs
// wrote) become U+FFFD, since the format is UTF-8.
std::string label_value(const std::string& value) {
    std::string out;
    for (std::size_t i = 0; i < value.size();) {
        const std::size_t n = sqlock::text::utf8_sequence_length(value, i);
        if (n == 0) {
            out += "\xEF\xBF\xBD";
            ++i;
            continue;
        }
        const char c = value[i];
        if (c == '\\')
            out += "\\\\";
        else if (c == '"')
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out.append(value, i, n);
        i += n;
    }
    return out;
}

// One metric family: its HELP and TYPE lines, then its samples.
class Family {
  public:
    Family(std::string name, const std::string& help, const char* type) : name_(std::move(name)) {
        text_ = "# HELP " + name_ + " " + help + "\n# TYPE " + name_ + " " + type + "\n";
    }
    // `labels`: name="value" pairs, values already escaped.
    void sample(const std::string& labels, const std::string& value) {
        text_ += name_ + "{" + labels + "} " + value + "\n";
    }
    const std::string& text() const { return text_; }

  private:
    std::string name_;
    std::string text_;
};

std::string number(double value) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", value);
    return buf;
}

void add_metrics_options(cxxopts::Options& options, const std::string& group) {
    options.add_options(group)(
        "max-names",
        "Series for at most N lock names (default 100; 0: only the sums); the rest are summed",
        cxxopts::value<std::string>(), "N");
}

// The names that get series of their own: those with waiters first (the
// longest waited, then the most waiters), then the oldest holds, then by
// name; the rest are summed.
std::vector<const sqlock::NameActivity*> first_names(const sqlock::LockActivity& activity,
                                                     std::size_t limit) {
    std::vector<const sqlock::NameActivity*> names;
    for (const auto& a : activity.names) names.push_back(&a);
    std::stable_sort(names.begin(), names.end(), [](const auto* a, const auto* b) {
        if ((a->waiters > 0) != (b->waiters > 0)) return a->waiters > 0;
        if (a->oldest_waiter_seconds != b->oldest_waiter_seconds)
            return a->oldest_waiter_seconds > b->oldest_waiter_seconds;
        if (a->waiters != b->waiters) return a->waiters > b->waiters;
        return a->holder_age_seconds > b->holder_age_seconds;
    });
    if (names.size() > limit) names.resize(limit);
    std::sort(names.begin(), names.end(),
              [](const auto* a, const auto* b) { return a->name < b->name; });
    return names;
}

// The lock-level families: one series per name of `shown`, then the rest
// summed (counts) or at their extreme (ages) in series without a name.
std::string lock_series(const sqlock::LockActivity& activity, const std::string& table,
                        std::size_t limit) {
    Family holders("sqlock_lock_holders",
                   "Live holders of the lock name (a semaphore: slots in use; shared: holders).",
                   "gauge");
    Family age("sqlock_lock_holder_age_seconds",
               "Seconds since the oldest live holder of the name took it (database clock).",
               "gauge");
    Family left("sqlock_lock_holder_seconds_left",
                "Seconds until the first live holder's lease of the name ends, unless renewed.",
                "gauge");
    Family waiters("sqlock_lock_waiters", "Callers waiting in line for the lock name.", "gauge");
    Family waited("sqlock_lock_oldest_waiter_seconds",
                  "Seconds since the first caller waiting in line for the name joined it "
                  "(database clock).",
                  "gauge");
    // A queue made by an older sqlock keeps no join times: no such series.
    const bool ages = activity.waiter_ages;
    Family leader_id("sqlock_leader_fencing_id",
                     "The fencing id (lock row id) of the election's live leader.", "gauge");
    Family leader_age("sqlock_leader_age_seconds",
                      "Seconds since the election's live leader took the lead.", "gauge");
    const std::vector<const sqlock::NameActivity*> shown = first_names(activity, limit);
    sqlock::NameActivity rest;
    bool any_rest = false;
    std::size_t next = 0;
    for (const auto& a : activity.names) {
        const bool own = next < shown.size() && shown[next] == &a;
        if (own) {
            ++next;
            const std::string labels = table + ",name=\"" + label_value(a.name) + "\"";
            holders.sample(labels, std::to_string(a.holders));
            waiters.sample(labels, std::to_string(a.waiters));
            if (ages && a.waiters > 0) waited.sample(labels, number(a.oldest_waiter_seconds));
            if (a.holders > 0) {
                age.sample(labels, number(a.holder_age_seconds));
                left.sample(labels, number(a.holder_seconds_left));
            }
            if (a.election && a.leader_id > 0) {
                leader_id.sample(labels, std::to_string(a.leader_id));
                leader_age.sample(labels, number(a.holder_age_seconds));
            }
            continue;
        }
        if (a.holders > 0) {
            rest.holder_age_seconds = rest.holders == 0
                                          ? a.holder_age_seconds
                                          : std::max(rest.holder_age_seconds, a.holder_age_seconds);
            rest.holder_seconds_left =
                rest.holders == 0 ? a.holder_seconds_left
                                  : std::min(rest.holder_seconds_left, a.holder_seconds_left);
        }
        if (a.waiters > 0)
            rest.oldest_waiter_seconds =
                rest.waiters == 0 ? a.oldest_waiter_seconds
                                  : std::max(rest.oldest_waiter_seconds, a.oldest_waiter_seconds);
        rest.holders += a.holders;
        rest.waiters += a.waiters;
        any_rest = true;
    }
    if (any_rest) {
        holders.sample(table, std::to_string(rest.holders));
        waiters.sample(table, std::to_string(rest.waiters));
        if (ages && rest.waiters > 0) waited.sample(table, number(rest.oldest_waiter_seconds));
        if (rest.holders > 0) {
            age.sample(table, number(rest.holder_age_seconds));
            left.sample(table, number(rest.holder_seconds_left));
        }
    }
    Family names("sqlock_lock_names",
                 "Lock names with a live holder, a waiter or an election (with and without "
                 "series of their own).",
                 "gauge");
    names.sample(table, std::to_string(activity.names.size()));
    std::string out;
    for (const Family* f :
         {&holders, &age, &left, &waiters, &waited, &leader_id, &leader_age, &names})
        if (f != &waited || ages) out += f->text();
    return out;
}

int run_metrics(Invocation& inv) {
    if (!inv.args.empty())
        throw usage_error(
            "metrics takes no arguments; usage: sqlock [--table NAME] metrics [--max-names N]");
    const auto limit =
        static_cast<std::size_t>(integer_option(inv.options, "max-names", 0, 1000000, 100));
    sqlock::Locker locker = open_locker(inv.global);
    const sqlock::LockActivity activity = locker.lock_activity();
    const sqlock::LockCounts& locks = activity.counts;
    sqlock::RunHistory history(locker);
    const std::vector<sqlock::RunCount> counts = history.run_counts();

    // Runs per name and outcome; names in the order counted (by name).
    std::vector<std::string> names;
    std::map<std::string, std::map<sqlock::run_outcome, std::int64_t>> runs;
    for (const auto& c : counts) {
        if (runs.find(c.name) == runs.end()) names.push_back(c.name);
        runs[c.name][c.outcome] += c.count;
    }

    const std::string table = "table=\"" + label_value(inv.global.table) + "\"";
    Family last_success("sqlock_job_last_success_timestamp_seconds",
                        "When the job's last successful run ended, in Unix time (database clock).",
                        "gauge");
    Family last_duration("sqlock_job_last_run_duration_seconds",
                         "How long the job's last finished run took.", "gauge");
    Family last_outcome(
        "sqlock_job_last_outcome",
        "The outcome of the job's last finished run: 1 for it, 0 for the other outcomes.", "gauge");
    Family last_attempt("sqlock_job_last_run_attempt",
                        "The attempt the job's last finished run was (run --retry): 1 for the "
                        "first.",
                        "gauge");
    Family running("sqlock_job_running", "Runs of the job in progress.", "gauge");
    Family blocked("sqlock_job_blocked",
                   "1 when the job was skipped since its last run because a job it runs after "
                   "(run --after) did not succeed last, else 0.",
                   "gauge");
    Family recorded("sqlock_job_runs",
                    "Runs of the job in the run history kept, by outcome (pruning by `sqlock "
                    "reap` lowers it).",
                    "gauge");
    for (const std::string& name : names) {
        const std::string job = table + ",name=\"" + label_value(name) + "\"";
        const sqlock::JobStatus status = history.job_status(name);
        if (status.last_success_end_ms)
            last_success.sample(job,
                                number(static_cast<double>(*status.last_success_end_ms) / 1000.0));
        if (status.last_finished) {
            if (status.last_finished->duration_seconds)
                last_duration.sample(job, number(*status.last_finished->duration_seconds));
            last_attempt.sample(job, std::to_string(status.last_finished->attempt));
            // Every outcome but running: a finished run never is.
            for (sqlock::run_outcome o : sqlock::all_run_outcomes)
                if (o != sqlock::run_outcome::running && !sqlock::is_skip(o))
                    last_outcome.sample(job + ",outcome=\"" + sqlock::to_string(o) + "\"",
                                        status.last_finished->outcome == o ? "1" : "0");
        }
        auto& by_outcome = runs[name];
        running.sample(job, std::to_string(by_outcome[sqlock::run_outcome::running]));
        blocked.sample(
            job, status.skipped && status.skipped->outcome == sqlock::run_outcome::after_failed
                     ? "1"
                     : "0");
        for (sqlock::run_outcome o : sqlock::all_run_outcomes)
            recorded.sample(job + ",outcome=\"" + sqlock::to_string(o) + "\"",
                            std::to_string(by_outcome[o]));
    }

    Family held("sqlock_locks_held", "Rows of the lock table held (not expired).", "gauge");
    held.sample(table, std::to_string(locks.held));
    Family expired("sqlock_locks_expired",
                   "Expired rows of the lock table waiting for `sqlock reap` (they block nobody).",
                   "gauge");
    expired.sample(table, std::to_string(locks.expired));

    std::string out;
    for (const Family* f : {&last_success, &last_duration, &last_outcome, &last_attempt, &running,
                            &blocked, &recorded})
        out += f->text();
    Family paused("sqlock_job_paused_timestamp_seconds",
                  "Since when the job has been paused (sqlock pause), in Unix time; no series "
                  "when it is not.",
                  "gauge");
    for (const sqlock::PauseInfo& p : sqlock::Pauses(locker).all()) {
        sqlock::LockInfo at;  // one parser of the database's time text: LockInfo's
        at.created = p.created;
        const auto since = std::chrono::duration_cast<std::chrono::milliseconds>(
                               at.created_time().time_since_epoch())
                               .count();
        paused.sample(table + ",name=\"" + label_value(p.name) + "\"",
                      number(static_cast<double>(since) / 1000.0));
    }
    out += paused.text();
    out += lock_series(activity, table, limit);
    for (const Family* f : {&held, &expired}) out += f->text();
    out.pop_back();  // Output::data adds the last newline
    Output::data(out);
    return exit_code::ok;
}

}  // namespace

Command metrics_command() {
    return {"metrics",
            metrics_usage,
            "the locks and the run history in the Prometheus text format",
            metrics_details,
            add_metrics_options,
            run_metrics};
}

}  // namespace sqlock_cli
