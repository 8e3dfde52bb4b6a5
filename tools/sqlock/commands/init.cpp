// sqlock init: create the lock table and its index (idempotent). Needed
// once per database other than the embedded default, which is created on
// first use.
#include "common/command_line.hpp"
#include "common/commands.hpp"
#include "common/database.hpp"
#include "common/exit_codes.hpp"

namespace sqlock_cli {

int run_init(Invocation& inv) {
    if (!inv.args.empty()) throw usage_error("init takes no arguments; usage: sqlock init");
    sqlock::Locker locker = open_locker(inv.global, /*creating=*/true);
    const std::vector<std::string> notes = locker.init();
    inv.out.result("lock table " + in_quotes(locker.table()) + " is ready" +
                   at_database(locker.url()));
    for (const std::string& note : notes) inv.out.note("note: " + note);
    return exit_code::ok;
}

}  // namespace sqlock_cli
