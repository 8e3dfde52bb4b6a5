// sqlock acquire NAME: take a lock and leave it held after sqlock exits, for
// maintenance windows and for scripts that release it later themselves.
#include <signal.h>

#include <cstdio>

#include "commands/commands.hpp"
#include "common/command_line.hpp"
#include "common/database.hpp"
#include "common/exit_codes.hpp"
#include "common/lock_format.hpp"
#include "common/option_values.hpp"
#include "run/acquisition.hpp"

namespace sqlock_cli {
namespace {

const char* const acquire_usage =
    "NAME [NAME...] [--expires DUR] [--wait DUR] [--slots N] [--json]";

const char* const acquire_details =
    "Takes lock NAME and leaves it held when sqlock exits, until it is released with\n"
    "`sqlock release` or its lease (--expires) ends. Nothing renews it.\n"
    "\n"
    "Prints shell assignments (or --json) with the lock's name, fencing id and owner\n"
    "token, so that a script can hold the lock across commands:\n"
    "\n"
    "  eval \"$(sqlock acquire maintenance --expires 2h)\" || exit\n"
    "  ...                                  # the maintenance work\n"
    "  sqlock release \"$SQLOCK_LOCKSTRING\"   # uses $SQLOCK_TOKEN\n";

void add_acquire_options(cxxopts::Options& options, const std::string& group) {
    auto add = options.add_options(group);
    add("expires", "Lease: the lock ends this long after it was taken unless released before",
        cxxopts::value<std::string>()->default_value("1h"), "DUR");
    add_wait_options(add, "fails at once");
    add("slots", "Counting semaphore: take one of N slots of NAME", cxxopts::value<std::string>(),
        "N");
    add("shared", "Take NAME shared: beside other shared holders, never beside an exclusive one");
    add("json", "Print JSON instead of shell assignments");
}

// 'text' for a POSIX shell: single quotes, with ' written as '\''.
std::string shell_quoted(const std::string& text) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// A reader that went away (`sqlock acquire x | true`) must make the write
// fail with EPIPE, not kill sqlock with SIGPIPE before it can release: the
// lock would stay held for its whole lease with nobody knowing its token.
void ignore_sigpipe() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    ::sigaction(SIGPIPE, &ignore, nullptr);
}

// Several names: one set, all or nothing, under one owner token.
int acquire_set_and_leave(Invocation& inv, const AcquireRequest& request, bool json) {
    sqlock::Locker locker = open_locker(inv.global);
    const std::string db = at_database(locker.url());
    sqlock::LockSet set = acquire_set(locker, request, inv.out);
    ignore_sigpipe();
    nlohmann::ordered_json ids = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < set.size(); ++i) ids[set.names()[i]] = set.ids()[i];
    std::string names;
    for (const auto& name : set.names()) names += " " + pasteable(name);
    if (json) {
        Output::data(json_text({{"names", set.names()},
                                {"ids", ids},
                                {"token", set.owner_token()},
                                {"expires", set.expires()}},
                               false));
    } else {
        Output::data("export SQLOCK_LOCKS=" + shell_quoted(ids.dump()) + "\n" +
                     "export SQLOCK_TOKEN=" + set.owner_token() + "\n" +
                     "export SQLOCK_EXPIRES=" + shell_quoted(set.expires()) + "\n");
    }
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        std::clearerr(stdout);
        set.release();
        throw cli_error(exit_code::internal,
                        "could not write the lock set's token to stdout; released it again" + db);
    }
    inv.out.note("acquired the lock set of " + std::to_string(set.size()) + " names until " +
                 set.expires() + " UTC; release it with `sqlock release" + names + " --token " +
                 set.owner_token() + "`" + db);
    set.detach();
    return exit_code::ok;
}

int run_acquire(Invocation& inv) {
    if (inv.args.empty())
        throw usage_error(
            "acquire needs a lock name; usage: sqlock acquire NAME [NAME...] "
            "[--expires DUR] [--wait DUR] [--slots N] [--shared] [--json]");
    const auto& o = inv.options;
    AcquireRequest request;
    request.name = inv.args[0];
    request.slots = static_cast<int>(integer_option(o, "slots", 1, 10000, 0));
    const WaitOption wait = wait_option(o);
    request.wait = wait.wait;
    request.wait_forever = wait.forever;
    request.options.queue_lease = wait.queue_lease;
    request.options.expires = duration_option(o, "expires", duration_kind::positive);
    request.options.metadata["command"] = "sqlock acquire";
    const bool json = o.count("json") > 0;
    apply_shared_option(o, request);

    if (inv.args.size() > 1) {
        if (request.slots)
            throw usage_error("--slots takes one semaphore name, got " +
                              std::to_string(inv.args.size()) + " names");
        check_set_names(inv.args,
                        "usage: sqlock acquire NAME [NAME...] [--expires DUR] "
                        "[--wait DUR] [--json]");
        request.set = inv.args;
        return acquire_set_and_leave(inv, request, json);
    }

    sqlock::Locker locker = open_locker(inv.global);
    const std::string db = at_database(locker.url());
    sqlock::Lock lock = acquire(locker, request, inv.out);

    ignore_sigpipe();

    if (json) {
        Output::data(json_text({{"name", lock.name()},
                                {"lockstring", lock.lockstring()},
                                {"mode", mode_name(lock.mode())},
                                {"slot", lock.slot()},
                                {"id", lock.id()},
                                {"token", lock.owner_token()},
                                {"created", lock.created()},
                                {"expires", lock.expires()}},
                               false));
    } else {
        Output::data("export SQLOCK_NAME=" + shell_quoted(lock.name()) + "\n" +
                     "export SQLOCK_LOCKSTRING=" + shell_quoted(lock.lockstring()) + "\n" +
                     "export SQLOCK_ID=" + std::to_string(lock.id()) + "\n" +
                     "export SQLOCK_TOKEN=" + lock.owner_token() + "\n" +
                     "export SQLOCK_EXPIRES=" + shell_quoted(lock.expires()) + "\n");
    }
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        // Nobody learnt the token: do not leave a lock only --force can free.
        std::clearerr(stdout);  // told here, not again by main()
        lock.release();
        throw cli_error(exit_code::internal,
                        "could not write the lock's token to stdout; released lock " +
                            in_quotes(request.name) + " again" + db);
    }
    inv.out.note("acquired lock " + in_quotes(lock.lockstring()) + " (id " +
                 std::to_string(lock.id()) + ") until " + lock.expires() +
                 " UTC; release it with `sqlock release " + pasteable(lock.lockstring()) +
                 " --token " + lock.owner_token() + "`" + db);
    // Leave the row held past this process: released later by token,
    // by --force, or when its lease runs out.
    lock.detach();
    return exit_code::ok;
}

}  // namespace

Command acquire_command() {
    return {"acquire",
            acquire_usage,
            "take lock NAME and leave it held (maintenance windows)",
            acquire_details,
            add_acquire_options,
            run_acquire};
}

}  // namespace sqlock_cli
