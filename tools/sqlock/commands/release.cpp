// sqlock release NAME: release a lock taken by `sqlock acquire` (by its owner
// token), or anyone's lock with --force.
#include "commands/commands.hpp"
#include "common/command_line.hpp"
#include "common/database.hpp"
#include "common/exit_codes.hpp"
#include "common/lock_format.hpp"
#include "common/option_values.hpp"

namespace sqlock_cli {
namespace {

const char* const release_usage = "NAME [NAME...] [--token TOKEN | --force]";

const char* const release_details =
    "Without --force, releases NAME only if its owner token is TOKEN (--token, else\n"
    "$SQLOCK_TOKEN): exits 79 if someone else holds it or nobody does (it ran out and\n"
    "was reaped or taken over). With --force, releases NAME whoever holds it and says\n"
    "whose it was; a lock that is not held is not an error then. NAME is the row's name:\n"
    "\"name#N\" for slot N of a semaphore. Several names (a set taken by `sqlock\n"
    "acquire A B`, one token for all) are each released, even when one fails; the\n"
    "first failure decides the exit status.\n";

void add_release_options(cxxopts::Options& options, const std::string& group) {
    auto add = options.add_options(group);
    add("token", "Owner token printed by `sqlock acquire`", cxxopts::value<std::string>(), "TOKEN");
    add("force", "Release the lock whoever holds it");
}

int run_release(Invocation& inv) {
    if (inv.args.empty())
        throw usage_error("release needs a lock name; " + usage_line("release", release_usage));
    const bool force = inv.options.count("force") > 0;
    if (force && inv.options.count("token"))
        throw usage_error("use either --token or --force, not both");
    const std::string token = force ? std::string() : token_option(inv.options);
    if (!force && token.empty())
        throw usage_error(
            "release needs the owner token (--token TOKEN or $SQLOCK_TOKEN), or "
            "--force to release whoever holds " +
            in_quotes(inv.args[0]));

    sqlock::Locker locker = open_locker(inv.global);
    const std::string db = at_database(locker.url());
    auto release_one = [&](const std::string& name) {
        if (force) {
            auto row = locker.force_release(name);
            if (!row) {
                // A semaphore's rows are "name#N": say which to release, as `show` does.
                auto slots = locker.list(name + "#");
                if (!slots.empty())
                    inv.out.result("no lock named " + in_quotes(name) + ", but " +
                                   count_of(slots.size(), "row") + " of semaphore " +
                                   in_quotes(name) + ": release one with `sqlock release " +
                                   pasteable(slots.front().name) + " --force`" + db);
                else
                    inv.out.result("lock " + in_quotes(name) + " was not held" + db);
            } else {
                inv.out.result("released lock " + in_quotes(name) + " (id " +
                               std::to_string(row->id) + "), which was held by " +
                               describe_holder(*row) +
                               (row->expired() ? " (its lease had run out)" : "") + db);
            }
            return;
        }
        // Throws errc::lost (79) when another holder has it.
        auto row = locker.release(name, token);
        if (!row) throw not_held_by_anyone(name, db);
        inv.out.result("released lock " + in_quotes(name) + " (id " + std::to_string(row->id) +
                       ")" + db);
    };
    if (inv.args.size() == 1) {
        release_one(inv.args[0]);
        return exit_code::ok;
    }
    // Several names (a set taken by `sqlock acquire A B`): each is released
    // even when another fails, each failure said in turn; the first one's
    // code is the exit status.
    int first_code = 0;
    std::size_t failed = 0;
    for (const std::string& name : inv.args) {
        int code = 0;
        try {
            release_one(name);
        } catch (const sqlock::error& e) {
            code = exit_code_for(e.category());
            Output::error(e.what());
        } catch (const cli_error& e) {
            code = e.code();
            Output::error(e.what());
        }
        if (code == 0) continue;
        ++failed;
        if (first_code == 0) first_code = code;
    }
    if (failed)
        throw cli_error(first_code, std::to_string(failed) + " of the " +
                                        std::to_string(inv.args.size()) +
                                        " locks were not released (said above)" + db);
    return exit_code::ok;
}

}  // namespace

Command release_command() {
    return {"release",
            release_usage,
            "release a lock by its owner token, or anyone's with --force",
            release_details,
            add_release_options,
            run_release};
}

}  // namespace sqlock_cli
