// sqlock history [NAME] [--since DUR] [--limit N] [--json]: the runs that
// `sqlock run` recorded, newest first.

#include "command_line.hpp"
#include "commands.hpp"
#include "database.hpp"
#include "exit_codes.hpp"
#include "lock_format.hpp"
#include "option_values.hpp"

namespace sqlock_cli {

const char* const history_details =
    "Each run of `sqlock run` is recorded when it starts (outcome running) and when it\n"
    "ends: succeeded, failed (exit status), killed (signal), lost, or timed_out (stopped\n"
    "at its --max-runtime; its status after that too). A run whose holder died, hung or\n"
    "lost its lock shows as lost once its lease has run out, ended at the lease's end\n"
    "when that is known. Times are UTC, from the database's clock.\n"
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
}

namespace {

std::string run_table(const std::vector<sqlock::RunRecord>& runs) {
    std::vector<std::vector<std::string>> cells;
    cells.push_back({"STARTED (UTC)", "DURATION", "OUTCOME", "STATUS", "NAME", "HOST", "PID",
                     "USER", "FENCING", "PROGRAM"});
    for (const auto& run : runs)
        cells.push_back({run.started.substr(0, 19), seconds_text(run.duration_seconds),
                         sqlock::to_string(run.outcome), status_text(run),
                         sqlock::text::printable(run.name), sqlock::text::printable(run.host),
                         std::to_string(run.pid), sqlock::text::printable(run.user),
                         std::to_string(run.fencing_id), sqlock::text::printable(run.program)});
    return aligned_columns(cells);
}

}  // namespace

int run_history(Invocation& inv) {
    const std::string usage = "usage: sqlock history [NAME] [--since DUR] [--limit N] [--json]";
    if (inv.args.size() > 1) throw usage_error("history takes at most one lock name; " + usage);
    sqlock::HistoryQuery query;
    if (!inv.args.empty()) query.name = inv.args[0];
    if (inv.options.count("since"))
        query.since = duration_option(inv.options, "since", duration_kind::positive);
    query.limit = static_cast<std::size_t>(integer_option(inv.options, "limit", 1, 100000, 50));
    sqlock::Locker locker = open_locker(inv.global);
    const auto runs = locker.history(query);
    if (inv.options.count("json")) {
        nlohmann::ordered_json array = nlohmann::ordered_json::array();
        for (const auto& run : runs) array.push_back(run_json(run));
        Output::data(json_text(array, true));
    } else if (runs.empty()) {
        inv.out.result("no runs recorded" +
                       (query.name.empty() ? std::string() : " of " + in_quotes(query.name)) +
                       (query.since.count() ? " in the last " + sqlock::format_duration(query.since)
                                            : std::string()) +
                       at_database(locker.url()));
    } else {
        Output::data(run_table(runs));
    }
    return exit_code::ok;
}

}  // namespace sqlock_cli
