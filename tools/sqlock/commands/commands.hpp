// The commands, one file each in this folder (as git's builtin/*.c): each
// gives its name, usage, summary, help, options and run as one Command.
// commands.cpp lists them in the order `sqlock --help` shows.
#pragma once

#include "common/command.hpp"

namespace sqlock_cli {

Command run_command();
Command elect_command();
Command leader_command();
Command acquire_command();
Command release_command();
Command renew_command();
Command list_command();
Command show_command();
Command history_command();
Command pause_command();
Command resume_command();
Command check_command();
Command metrics_command();
Command reap_command();
Command init_command();
Command doctor_command();
Command help_command();

}  // namespace sqlock_cli
