// sqlock metrics: the lock table and its run history in the Prometheus text
// exposition format (version 0.0.4) on stdout, for node_exporter's textfile
// collector. Counted by the database (aggregate queries), so the cost does
// not grow with the history kept, only with the number of job names.
#include <cstdio>
#include <map>

#include "command_line.hpp"
#include "commands.hpp"
#include "database.hpp"
#include "exit_codes.hpp"
#include "lock_format.hpp"

namespace sqlock_cli {

const char* const metrics_details =
    "Prints, in the Prometheus text format, per job (NAME, from the run history):\n"
    "  sqlock_job_last_success_timestamp_seconds  when the last success ended (Unix time)\n"
    "  sqlock_job_last_run_duration_seconds       how long the last finished run took\n"
    "  sqlock_job_last_outcome{outcome=...}       1 for the last finished run's outcome, else 0\n"
    "  sqlock_job_last_run_attempt                its attempt (run --retry; 1 if not retried)\n"
    "  sqlock_job_running                         runs in progress\n"
    "  sqlock_job_runs{outcome=...}               runs in the history kept, by outcome (a\n"
    "                                             retried job: one per attempt)\n"
    "and for the table: sqlock_locks_held, sqlock_locks_expired (waiting for `reap`).\n"
    "Every series has the labels table and (per job) name. Write it atomically for\n"
    "node_exporter's textfile collector, e.g. every minute from cron:\n"
    "  sqlock metrics > DIR/sqlock.prom.$$ && mv DIR/sqlock.prom.$$ DIR/sqlock.prom\n";

namespace {

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

}  // namespace

int run_metrics(Invocation& inv) {
    if (!inv.args.empty())
        throw usage_error("metrics takes no arguments; usage: sqlock [--table NAME] metrics");
    sqlock::Locker locker = open_locker(inv.global);
    const sqlock::LockCounts locks = locker.lock_counts();
    const std::vector<sqlock::RunCount> counts = locker.run_counts();

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
    Family recorded("sqlock_job_runs",
                    "Runs of the job in the run history kept, by outcome (pruning by `sqlock "
                    "reap` lowers it).",
                    "gauge");
    for (const std::string& name : names) {
        const std::string job = table + ",name=\"" + label_value(name) + "\"";
        const sqlock::JobStatus status = locker.job_status(name);
        if (status.last_success_end_ms)
            last_success.sample(job,
                                number(static_cast<double>(*status.last_success_end_ms) / 1000.0));
        if (status.last_finished) {
            if (status.last_finished->duration_seconds)
                last_duration.sample(job, number(*status.last_finished->duration_seconds));
            last_attempt.sample(job, std::to_string(status.last_finished->attempt));
            // Every outcome but running: a finished run never is.
            for (sqlock::run_outcome o : sqlock::all_run_outcomes)
                if (o != sqlock::run_outcome::running)
                    last_outcome.sample(job + ",outcome=\"" + sqlock::to_string(o) + "\"",
                                        status.last_finished->outcome == o ? "1" : "0");
        }
        auto& by_outcome = runs[name];
        running.sample(job, std::to_string(by_outcome[sqlock::run_outcome::running]));
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
                            &recorded, &held, &expired})
        out += f->text();
    out.pop_back();  // Output::data adds the last newline
    Output::data(out);
    return exit_code::ok;
}

}  // namespace sqlock_cli
