// sqlock init: create the lock table and its index (idempotent). Needed
// once per database other than the embedded default, which is created on
// first use.
#include "commands/commands.hpp"
#include "common/command_line.hpp"
#include "common/database.hpp"
#include "common/exit_codes.hpp"

namespace sqlock_cli {
namespace {

const char* const init_usage = "";

int run_init(Invocation& inv) {
    if (!inv.args.empty())
        throw usage_error("init takes no arguments; " + usage_line("init", init_usage));
    sqlock::Locker locker = open_locker(inv.global, /*creating=*/true);
    const std::vector<std::string> notes = locker.init();
    inv.out.result("lock table " + in_quotes(locker.table()) + " is ready" +
                   at_database(locker.url()));
    for (const std::string& note : notes) inv.out.note("note: " + note);
    return exit_code::ok;
}

}  // namespace

Command init_command() {
    return {"init", init_usage, "create the lock table (idempotent)", "", nullptr, run_init};
}

}  // namespace sqlock_cli
