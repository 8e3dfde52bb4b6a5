// sqlock reap: delete expired lock rows, and run history older than the
// retention. Expired rows never block anyone (the
// next acquirer takes them over); reaping only reclaims space and keeps
// `list` short. Every batch is its own short transaction, so running it from
// cron on every host at once is safe: each row is deleted by exactly one.
#include "command_line.hpp"
#include "commands.hpp"
#include "database.hpp"
#include "exit_codes.hpp"
#include "lock_format.hpp"
#include "option_values.hpp"

namespace sqlock_cli {

const char* const reap_details =
    "Also deletes runs of the run history (`sqlock history`) started more than\n"
    "--history-retention ago, in short batches like the expired locks.\n"
    "Safe to run from cron on every host at once, e.g. every ten minutes:\n"
    "  */10 * * * *  sqlock reap --quiet\n";

void add_reap_options(cxxopts::Options& options, const std::string& group) {
    auto add = options.add_options(group);
    add("dry-run", "Only say what would be deleted (expired locks; the history is not touched)");
    add("history-retention", "Delete runs of the history started more than DUR ago",
        cxxopts::value<std::string>()->default_value("90d"), "DUR");
    add("json", "Print JSON: {\"dry_run\", \"count\", \"locks\"}");
}

int run_reap(Invocation& inv) {
    if (!inv.args.empty())
        throw usage_error(
            "reap takes no arguments; usage: sqlock reap [--dry-run] [--history-retention DUR] "
            "[--json]");
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
    const std::size_t pruned = dry_run ? 0 : locker.prune_history(retention);

    if (json) {
        nlohmann::ordered_json locks = nlohmann::ordered_json::array();
        for (const auto& row : expired) locks.push_back(lock_json(row));
        Output::data(json_text(
            {{"dry_run", dry_run}, {"count", count}, {"locks", locks}, {"history_pruned", pruned}},
            true));
        return exit_code::ok;
    }
    inv.out.result(std::string(dry_run ? "would delete " : "deleted ") + std::to_string(count) +
                   (count == 1 ? " expired lock" : " expired locks") +
                   (pruned == 0
                        ? std::string()
                        : " and " + count_of(pruned, "run") + " of the history older than " +
                              sqlock::format_duration(retention)) +
                   db);
    // Which rows: the data a dry run (or --verbose) asks for, on stdout.
    if (dry_run || inv.out.verbose()) {
        for (const auto& row : expired)
            Output::data("  " + sqlock::text::printable(row.name) + " (id " +
                         std::to_string(row.id) + ", " + describe_holder(row) + ", " +
                         expiry_phrase(row) + ")");
    }
    return exit_code::ok;
}

}  // namespace sqlock_cli
