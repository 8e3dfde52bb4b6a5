// sqlock: named locks and counting semaphores in a SQL table, from the shell.
//
// main() only dispatches (the commands live in commands/) and is the one
// place where every failure becomes a single "sqlock: ..." line on stderr and
// an exit code (common/exit_codes.hpp): nothing escapes as an uncaught exception.
#include <cxxopts.hpp>

#include "common/command.hpp"
#include "common/command_line.hpp"
#include "common/exit_codes.hpp"
#include "common/output.hpp"
#include "common/password_scrub.hpp"
#include "sqlock/backends.hpp"
#include "sqlock/config.hpp"
#include "sqlock/error.hpp"

int main(int argc, char** argv) {
    using namespace sqlock_cli;
    bool quiet = false;
    // `check` is a monitoring plugin: its failures follow the plugin
    // conventions (exit 3, UNKNOWN on stdout) instead of ours.
    const Command* named = named_command(argc, argv);
    const bool plugin = named && named->report_failure;
    auto failed = [&](const std::string& message, int code) {
        if (plugin) return named->report_failure(message, has_word(argc, argv, "--json"));
        Output::error(message);
        return code;
    };
    try {
        ParsedCommandLine parsed = parse_command_line(argc, argv);
        // Parsed values are copies: hide the password from `ps` from now on.
        scrub_database_passwords(argc, argv);
        // Data that did not reach stdout (a full disk) is no success: a
        // script's `sqlock metrics > f.tmp && mv f.tmp f` must not replace
        // a good file with a truncated one.
        auto written = [&](int code) {
            if (auto why = Output::finish_data())
                return failed("could not write to standard output: " + *why,
                              code == exit_code::ok ? exit_code::internal : code);
            return code;
        };
        if (parsed.what == ParsedCommandLine::action::help) {
            Output::data(parsed.text);
            return written(exit_code::ok);
        }
        if (parsed.what == ParsedCommandLine::action::version) {
            std::string backends;
            for (const std::string& name : sqlock::available_backends()) backends += " " + name;
            Output::data(std::string("sqlock ") + SQLOCK_VERSION +
                         " (backends:" + (backends.empty() ? " none" : backends) + ")");
            return written(exit_code::ok);
        }
        Invocation& inv = parsed.invocation;
        quiet = inv.global.quiet;
        return written(inv.command->run(inv));
    } catch (const cli_error& e) {
        if (plugin) return failed(e.what(), e.code());
        if (!(quiet && e.quiet_ok()) && *e.what()) Output::error(e.what());
        return e.code();
    } catch (const sqlock::error& e) {
        if (plugin) return failed(e.what(), exit_code_for(e.category()));
        // Busy and timeout are expected outcomes (another host has the lock);
        // --quiet keeps them out of cron mail.
        bool expected = e.category() == sqlock::errc::busy || e.category() == sqlock::errc::timeout;
        if (!(quiet && expected)) Output::error(e.what());
        return exit_code_for(e.category());
    } catch (const cxxopts::exceptions::exception& e) {
        return failed(plain_quotes(e.what()) + "; see `sqlock --help`", exit_code::usage);
    } catch (const std::exception& e) {
        return failed(std::string("internal error: ") + e.what(), exit_code::internal);
    } catch (...) {
        return failed("internal error: unknown exception", exit_code::internal);
    }
}
