// Clean stop on Ctrl-C / SIGTERM for long runs. The first SIGINT or SIGTERM only sets a flag
// that the run's loop polls (it then writes its best result and exits normally) and prints
// one line saying so; a second one restores the handler that was installed before ours
// (e.g. the files layer's, which removes temporary files, or the default) and raises the
// signal again, so an impatient user still kills the run at once. The handler does nothing
// but async-signal-safe calls (an atomic store, write(2), sigaction(2), raise(3)).
#pragma once

namespace placerl::run {

// Installs the handler for SIGINT and SIGTERM (idempotent: a second call does nothing).
// Call it after any handler that must run on the second signal (the files layer's clean-up
// of temporary files) is in place: the one found here is the one a second signal reaches.
// A signal that was ignored (SIG_IGN, e.g. under nohup) stays ignored.
void InstallStopOnSignal();

// Restores the handlers that InstallStopOnSignal replaced and clears the flag.
void UninstallStopOnSignal();

// True once a stop was asked for; cheap (one relaxed atomic load), poll it every step.
bool StopRequested();

// The signal that asked for the stop (SIGINT, SIGTERM), or 0.
int StopSignal();

}  // namespace placerl::run
