// sqlock — named locks and counting semaphores stored as rows in a SQL table.
#pragma once

#include "sqlock/backends.hpp"
#include "sqlock/config.hpp"
#include "sqlock/diagnosis.hpp"
#include "sqlock/duration.hpp"
#include "sqlock/error.hpp"
#include "sqlock/leadership.hpp"
#include "sqlock/lock.hpp"
#include "sqlock/lock_info.hpp"
#include "sqlock/lock_set.hpp"
#include "sqlock/locker.hpp"
#include "sqlock/observer.hpp"
#include "sqlock/options.hpp"
#include "sqlock/run_history.hpp"
#include "sqlock/transaction.hpp"
