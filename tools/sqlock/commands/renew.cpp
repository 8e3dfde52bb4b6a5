// sqlock renew NAME: extend the lease of a lock taken by `sqlock acquire`,
// by its owner token, for maintenance that runs longer than planned.
#include "commands/commands.hpp"
#include "common/command_line.hpp"
#include "common/database.hpp"
#include "common/exit_codes.hpp"
#include "common/lock_format.hpp"
#include "common/option_values.hpp"

namespace sqlock_cli {
namespace {

const char* const renew_usage = "NAME [--token TOKEN] [--expires DUR]";

const char* const renew_details =
    "Sets the lease of NAME to end DUR from now (the database's clock), if its owner\n"
    "token is TOKEN (--token, else $SQLOCK_TOKEN). Exits 79 if someone else holds it,\n"
    "nobody does, or its lease already ran out (an expired lock is not revived: someone\n"
    "may be taking it over). NAME is the row's name: \"name#N\" for slot N.\n"
    "\n"
    "Example:\n"
    "  eval \"$(sqlock acquire maintenance --expires 1h)\"\n"
    "  sqlock renew \"$SQLOCK_LOCKSTRING\" --expires 2h   # uses $SQLOCK_TOKEN\n";

void add_renew_options(cxxopts::Options& options, const std::string& group) {
    auto add = options.add_options(group);
    add("token", "Owner token printed by `sqlock acquire`", cxxopts::value<std::string>(), "TOKEN");
    add("expires", "New lease, counted from now",
        cxxopts::value<std::string>()->default_value("1h"), "DUR");
}

int run_renew(Invocation& inv) {
    if (inv.args.size() != 1)
        throw usage_error("renew needs exactly one lock name; " + usage_line("renew", renew_usage));
    const std::string& name = inv.args[0];
    const sqlock::duration lease = duration_option(inv.options, "expires", duration_kind::positive);
    const std::string token = token_option(inv.options);
    if (token.empty())
        throw usage_error("renew needs the owner token (--token TOKEN or $SQLOCK_TOKEN) of " +
                          in_quotes(name));

    sqlock::Locker locker = open_locker(inv.global);
    const std::string db = at_database(locker.url());
    // Throws errc::lost (79) when another holder has it or it ran out.
    auto row = locker.renew(name, token, lease);
    if (!row) throw not_held_by_anyone(name, db);
    inv.out.result("renewed lock " + in_quotes(name) + " (id " + std::to_string(row->id) +
                   ") until " + row->expires + " UTC" + db);
    return exit_code::ok;
}

}  // namespace

Command renew_command() {
    return {"renew",       renew_usage,       "extend the lease of a lock taken with `acquire`",
            renew_details, add_renew_options, run_renew};
}

}  // namespace sqlock_cli
