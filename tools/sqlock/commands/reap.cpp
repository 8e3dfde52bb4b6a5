// sqlock reap: delete expired lock rows, run history older than the
// retention and pauses that have ended. Expired rows never block anyone (the
// next acquirer takes them over), nor do ended pauses; reaping only reclaims
// space and keeps `list` short. Every batch is its own short transaction, so
// running it from cron on every host at once is safe: each row is deleted by
// exactly one.
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

const char* const reap_usage = "[--dry-run] [--history-retention DUR] [--json]";

const char* const reap_details =
    "Also deletes runs of the run history (`sqlock history`) started more than\n"
    "--history-retention ago, and pauses whose --for has run out (`sqlock\n"
    "pause`), in short batches like the expired locks.\n"
    "Safe to run from cron on every host at once, e.g. every ten minutes:\n"
    "  */10 * * * *  sqlock reap --quiet\n";

void add_reap_options(cxxopts::Options& options, const std::string& group) {
    auto add = options.add_options(group);
    add("dry-run",
        "Delete nothing; say what would be: the expired locks (which, on stdout), and how "
        "many runs older than --history-retention and expired pauses (counted)");
    add("history-retention", "Delete runs of the history started more than DUR ago",
        cxxopts::value<std::string>()->default_value("90d"), "DUR");
    add("json",
        "Print JSON: {\"dry_run\", \"count\" (expired locks deleted, or that would be), "
        "\"locks\", \"history_pruned\" and \"pauses_deleted\" (deleted: 0 in a dry run); "
        "a dry run adds \"history_would_prune\" and \"pauses_would_delete\"}");
}

int run_reap(Invocation& inv) {
    if (!inv.args.empty())
        throw usage_error("reap takes no arguments; " + usage_line("reap", reap_usage));
    const bool dry_run = inv.options.count("dry-run") > 0;
    const sqlock::duration retention =
        duration_option(inv.options, "history-retention", duration_kind::positive);
    const bool json = inv.options.count("json") > 0;
    sqlock::Locker locker = open_locker(inv.global);
    const std::string db = at_database(locker.url());

    // Which rows: exact for a dry run; for a real run, the expired rows seen
    // just before purging (another reaper may delete some of them first).
    std::vector<sqlock::LockInfo> expired;
    if (dry_run || json || inv.out.verbose()) expired = locker.list_expired();
    const std::size_t count = dry_run ? expired.size() : locker.purge_expired();
    // A dry run counts (the database does, with the conditions the deletes
    // use); a real run deletes. Either way, how many.
    sqlock::RunHistory history(locker);
    const std::size_t pruned =
        dry_run ? history.count_prunable(retention) : history.prune(retention);
    sqlock::Pauses pause_table(locker);
    const std::size_t pauses = dry_run ? pause_table.count_expired() : pause_table.purge_expired();

    if (json) {
        nlohmann::ordered_json locks = nlohmann::ordered_json::array();
        for (const auto& row : expired) locks.push_back(lock_json(row));
        // history_pruned and pauses_deleted always mean "deleted" (0 in a
        // dry run), so a script summing them never counts what was not.
        nlohmann::ordered_json out = {{"dry_run", dry_run},
                                      {"count", count},
                                      {"locks", locks},
                                      {"history_pruned", dry_run ? 0 : pruned},
                                      {"pauses_deleted", dry_run ? 0 : pauses}};
        if (dry_run) {
            out["history_would_prune"] = pruned;
            out["pauses_would_delete"] = pauses;
        }
        Output::data(json_text(out, true));
        return exit_code::ok;
    }
    // "deleted 3 expired locks, 2 runs of the history older than 90d and 1
    // expired pause": the history and the pauses only when there are some.
    std::vector<std::string> parts = {count_of(count, "expired lock")};
    if (pruned != 0)
        parts.push_back(count_of(pruned, "run") + " of the history older than " +
                        sqlock::format_duration(retention));
    if (pauses != 0) parts.push_back(count_of(pauses, "expired pause"));
    std::string what = parts[0];
    for (std::size_t i = 1; i < parts.size(); ++i)
        what += (i + 1 == parts.size() ? " and " : ", ") + parts[i];
    inv.out.result(std::string(dry_run ? "would delete " : "deleted ") + what + db);
    // Which rows: the data a dry run (or --verbose) asks for, on stdout.
    if (dry_run || inv.out.verbose()) {
        for (const auto& row : expired)
            Output::data("  " + sqlock::text::printable(row.name) + " (id " +
                         std::to_string(row.id) + ", " + describe_holder(row) + ", " +
                         expiry_phrase(row) + ")");
    }
    return exit_code::ok;
}

}  // namespace

Command reap_command() {
    return {"reap",
            reap_usage,
            "delete expired locks, old run history and ended pauses (cron-safe)",
            reap_details,
            add_reap_options,
            run_reap};
}

}  // namespace sqlock_cli
