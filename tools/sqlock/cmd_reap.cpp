// sqlock reap: delete expired lock rows. Expired rows never block anyone (the
// next acquirer takes them over); reaping only reclaims space and keeps
// `list` short. Every batch is its own short transaction, so running it from
// cron on every host at once is safe: each row is deleted by exactly one.
#include "command_line.hpp"
#include "commands.hpp"
#include "database.hpp"
#include "exit_codes.hpp"
#include "lock_format.hpp"

namespace sqlock_cli {

const char* const reap_details =
    "Safe to run from cron on every host at once, e.g. every ten minutes:\n"
    "  */10 * * * *  sqlock reap --quiet\n";

void add_reap_options(cxxopts::Options& options, const std::string& group) {
    auto add = options.add_options(group);
    add("dry-run", "Only say what would be deleted");
    add("json", "Print JSON: {\"dry_run\", \"count\", \"locks\"}");
}

int run_reap(Invocation& inv) {
    if (!inv.args.empty())
        throw usage_error("reap takes no arguments; usage: sqlock reap [--dry-run] [--json]");
    const bool dry_run = inv.options.count("dry-run") > 0;
    const bool json = inv.options.count("json") > 0;
    sqlock::Locker locker = open_locker(inv.global);
    const std::string db = at_database(locker.url());

    // Which rows: exact for a dry run; for a real run, the expired rows seen
    // just before purging (another reaper may delete some of them first).
    std::vector<sqlock::LockInfo> expired;
    if (dry_run || json || inv.out.verbose()) expired = locker.list_expired();
    const std::size_t count = dry_run ? expired.size() : locker.purge_expired();

    if (json) {
        nlohmann::ordered_json locks = nlohmann::ordered_json::array();
        for (const auto& row : expired) locks.push_back(lock_json(row));
        Output::data(json_text({{"dry_run", dry_run}, {"count", count}, {"locks", locks}}, true));
        return exit_code::ok;
    }
    inv.out.result(std::string(dry_run ? "would delete " : "deleted ") + std::to_string(count) +
                   (count == 1 ? " expired lock" : " expired locks") + db);
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
