/* devdir.h - a local cluster's directory and processes, as devcluster.c keeps them (paths, pid
 * files, starting, recognising and stopping its daemons), for up's half in devup.c. */
#pragma once
#include "devcluster.h"
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CONTROLLER_PROG "colony-controller"
#define AGENT_PROG      "colony-agent"
#define POLL_MS         50

/* Sleep ms, cut short by a caught signal (callers look at cli_interrupted). */
void dev_sleep_ms(int ms);
/* The log of daemon name in dir, into out. */
void dev_log_path(char out[PATH_MAX], const char *dir, const char *name);
/* An agent's state directory: inside dir, so that it goes with the cluster. */
void dev_state_path(char out[PATH_MAX], const char *dir, const char *name);
/* The path of file in dir, into out. */
void dev_file_path(char out[PATH_MAX], const char *dir, const char *file);
/* True while pid is a live process (not a zombie) of program. Reaps it first when it is our
 * own child that has ended (the demo starts the daemons itself). */
bool dev_is_running(pid_t pid, const char *program);
/* True when pid, our child, has ended; how says how ("exited with status 1"). */
bool dev_child_exited(pid_t pid, char *how, size_t len);
/* Start argv in the background in its own session, stdin /dev/null, stdout and stderr appended
 * to log (made 0600), with umask 077 when private. Returns 0 with *pid once the exec succeeded,
 * or -errno with err. */
int dev_start_program(const char *const argv[], bool private, const char *log, pid_t *pid, char *err, size_t errlen);
/* Write d's pid file (an agent's when agent) in dir. Returns 0, or -errno with err. */
int dev_write_pid_file(const char *dir, const dev_daemon *d, bool agent, char *err, size_t errlen);
/* The daemons dir's pid files name: agents sorted by name, then the controller, into *set (n
 * entries, caller frees). Returns 0 (also for a missing dir: none) or -errno. */
int dev_read_pid_files(const char *dir, dev_stopped **set, size_t *n);
/* Send sig to an entry that still runs as program: it becomes to, or DEV_STUCK when it cannot
 * be signalled; one that no longer runs keeps its state. */
void dev_signal_entry(dev_stopped *e, const char *program, int sig, dev_stop_how to);
/* Stop the daemons of set, all of one program (see dev_down), and remove their pid files. */
void dev_stop_set(const char *dir, dev_stopped *set, size_t n, const char *program);
/* Remove the controller's socket and port file. */
void dev_remove_endpoints(const char *dir);
/* The last lines of the log at path, read into buf, without trailing newlines; NULL when the log
 * is empty or unreadable. */
const char *dev_log_tail(const char *path, int lines, char *buf, size_t len);
/* The number (at most max) the small file at path holds: a pid, a port; 0 when it holds none or
 * is missing. */
int64_t dev_read_number_file(const char *path, int64_t max);
