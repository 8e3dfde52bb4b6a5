// A signal's name, as every message, the history and the JSON events say
// it: a job killed by a signal is shown by `run`, `history` and `check`.
#pragma once

#include <string>

namespace sqlock_cli {

/// "SIGTERM", "SIGINT", ...; "signal N" for others.
std::string signal_name(int signo);

}  // namespace sqlock_cli
