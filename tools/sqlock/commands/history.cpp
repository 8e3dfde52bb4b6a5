// sqlock history [NAME] [--since DUR] [--limit N] [--json]: the runs that
// `sqlock run` recorded, newest first.
#include <date/tz.h>

#include "commands/commands.hpp"
#include "common/command_line.hpp"
#include "common/database.hpp"
#include "common/exit_codes.hpp"
#include "common/local_windows.hpp"
#include "common/lock_format.hpp"
#include "common/option_values.hpp"
#include "sqlock/run_history.hpp"

namespace sqlock_cli {
namespace {

const char* const history_usage = "[NAME] [--since DUR] [--limit N] [--json]";

const char* const history_details =
    "Each run of `sqlock run` is recorded when it starts (outcome running) and when it\n"
    "ends: succeeded, failed (exit status), killed (signal), lost, or timed_out (stopped\n"
    "at its --max-runtime; its status after that too). A run whose holder died, hung or\n"
    "lost its lock shows as lost once its lease has run out, ended at the lease's end\n"
    "when that is known. Times are UTC, from the database's clock; with --tz ZONE (or\n"
    "SQLOCK_TZ) the text shows start times in that zone, and JSON adds started_local\n"
    "and ended_local.\n"
    "A job run again under the same lock (`run --retry`) has a run per attempt, all\n"
    "with the lock's fencing id; ATTEMPT (\"attempt\" in JSON) numbers them from 1.\n"
    "`sqlock reap` prunes runs older than --history-retention (90 days).\n"
    "\n"
    "Examples:\n"
    "  sqlock history nightly-backup --since 7d\n"
    "  sqlock history --limit 20 --json\n";

void add_history_options(cxxopts::Options& options, const std::string& group) {
    auto add = options.add_options(group);
    add("since", "Only runs started within DUR (e.g. 25h, 7d)", cxxopts::value<std::string>(),
        "DUR");
    add("limit", "At most N runs (default 50)", cxxopts::value<std::string>(), "N");
    add("json", "Print JSON (for scripts) instead of text");
    add("tz",
        "Show start times in time zone ZONE (e.g. Europe/Berlin; JSON: started_local and "
        "ended_local too); default $SQLOCK_TZ, else UTC",
        cxxopts::value<std::string>(), "ZONE");
}

std::string run_table(const std::vector<sqlock::RunRecord>& runs, const date::time_zone* zone) {
    std::vector<std::vector<std::string>> cells;
    cells.push_back({zone ? "STARTED (" + std::string(zone->name()) + ")" : "STARTED (UTC)",
                     "DURATION", "OUTCOME", "STATUS", "NAME", "HOST", "PID", "USER", "FENCING",
                     "ATTEMPT", "PROGRAM"});
    for (const auto& run : runs)
        cells.push_back({zone ? local_text(zone, run.started) : run.started.substr(0, 19),
                         seconds_text(run.duration_seconds), sqlock::to_string(run.outcome),
                         status_text(run), sqlock::text::printable(run.name),
                         sqlock::text::printable(run.host), std::to_string(run.pid),
                         sqlock::text::printable(run.user), std::to_string(run.fencing_id),
                         std::to_string(run.attempt), sqlock::text::printable(run.program)});
    return aligned_columns(cells);
}

int run_history(Invocation& inv) {
    if (inv.args.size() > 1)
        throw usage_error("history takes at most one lock name; " +
                          usage_line("history", history_usage));
    sqlock::HistoryQuery query;
    if (!inv.args.empty()) query.name = inv.args[0];
    if (inv.options.count("since"))
        query.since = duration_option(inv.options, "since", duration_kind::positive);
    query.limit = static_cast<std::size_t>(integer_option(inv.options, "limit", 1, 100000, 50));
    const date::time_zone* zone =
        zone_setting(inv.options.count("tz") > 0, string_option(inv.options, "tz"));
    sqlock::Locker locker = open_locker(inv.global);
    const auto runs = sqlock::RunHistory(locker).runs(query);
    if (inv.options.count("json")) {
        nlohmann::ordered_json array = nlohmann::ordered_json::array();
        for (const auto& run : runs) {
            nlohmann::ordered_json j = run_json(run);
            if (zone) {
                j["started_local"] = local_text(zone, run.started);
                j["ended_local"] =
                    run.ended ? nlohmann::ordered_json(local_text(zone, *run.ended)) : nullptr;
            }
            array.push_back(j);
        }
        Output::data(json_text(array, true));
    } else if (runs.empty()) {
        inv.out.result("no runs recorded" +
                       (query.name.empty() ? std::string() : " of " + in_quotes(query.name)) +
                       (query.since.count() ? " in the last " + sqlock::format_duration(query.since)
                                            : std::string()) +
                       at_database(locker.url()));
    } else {
        Output::data(run_table(runs, zone));
    }
    return exit_code::ok;
}

}  // namespace

Command history_command() {
    return {"history",       history_usage,       "show the runs `run` recorded, newest first",
            history_details, add_history_options, run_history};
}

}  // namespace sqlock_cli
