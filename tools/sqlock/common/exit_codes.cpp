#include "common/exit_codes.hpp"

namespace sqlock_cli {

int exit_code_for(sqlock::errc category, int conflict) {
    switch (category) {
        case sqlock::errc::busy:
        case sqlock::errc::timeout:
            return conflict;
        case sqlock::errc::lost:
            return exit_code::lost;
        case sqlock::errc::connection:
            return exit_code::unavailable;
        case sqlock::errc::configuration:
            return exit_code::configuration;
        case sqlock::errc::invalid_argument:
            return exit_code::usage;
        case sqlock::errc::backend:
            return exit_code::internal;
    }
    return exit_code::internal;
}

const std::string& exit_code_help() {
    static const std::string text =
        "Exit codes:\n"
        "  0        success (run: the command succeeded, or --once-per found this\n"
        "           window done and did not run it)\n"
        "  1        show: the lock is not held (no row, or an expired one); resume:\n"
        "           NAME was not paused\n"
        "  64       bad usage: unknown flag, bad duration, lock name, table name or\n"
        "           database URL, --min-hold longer than --expires, a --kill-grace\n"
        "           that does not fit the lease (or a lease too short to fence),\n"
        "           a bad --once-per window or offset\n"
        "  69       database unreachable (no server answers)\n"
        "  70       internal or database error, or output that could not be written\n"
        "  75       lock busy, or --wait ran out (run: see --conflict-exit-code)\n"
        "  78       configuration: lock table or database file missing (run `sqlock\n"
        "           init`), no home directory, no permission, login refused\n"
        "  79       the lock was lost while held (run: the command was terminated\n"
        "           unless --on-lost=ignore); release, renew: not held by that token\n"
        "  80       run: the job is paused (`sqlock pause`); the command was not run\n"
        "  124      run: the job ran longer than --max-runtime and was stopped\n"
        "  126/127  run: the command could not be executed / was not found\n"
        "  128+N    run: the command was killed by signal N, or sqlock was\n"
        "           interrupted by signal N while waiting for the lock\n"
        "  other    run: the command's own exit status\n";
    return text;
}

}  // namespace sqlock_cli
