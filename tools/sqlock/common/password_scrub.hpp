// Hiding database passwords from `ps`: the --db value is overwritten in place
// in argv once it has been parsed, which is what /proc/PID/cmdline shows.
// This narrows the window but cannot close it (the value is visible from
// exec until the overwrite), so the documentation recommends SQLOCK_DB,
// PGPASSWORD or ~/.pgpass over a password on the command line.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace sqlock_cli {

/// `text` with every password range replaced by "***": for echoing an
/// argument in a message when it might be a URL given in the wrong place.
std::string without_passwords(const std::string& text);

/// Overwrites the passwords of every `--db URL` / `--db=URL` argument with
/// '*', in place, stopping at "--" (the command `run` executes is not ours).
void scrub_database_passwords(int argc, char** argv);

}  // namespace sqlock_cli
