/* devcluster.c - a local cluster's directory: its daemons' paths and pid files, starting, finding
 * and stopping them (see devcluster.h, devdir.h); up is devup.c's.
 *
 * A daemon is identified by its pid file and by /proc/<pid>/stat naming its program, so a pid
 * reused by some other process after a crash is never signalled. */
#include "devcluster.h"
#include "devdir.h"
#include "clock.h"
#include "agentunit.h"
#include "cli.h"
#include "fileio.h"
#include "format.h"
#include "units.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define COMM_LEN           15 /* the kernel cuts a process name to this (TASK_COMM_LEN - 1) */
#define STOP_GRACE_MS      10000
#define KILL_WAIT_MS       5000
#define CLEANUP_TIMEOUT_MS 60000 /* --cleanup may first stop a scope (SIGKILL after 10 s) */

void dev_sleep_ms(int ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

        nanosleep(&ts, NULL); /* a caught signal cuts it short; callers look at cli_interrupted */
}

static void pid_path(char out[PATH_MAX], const char *dir, const char *name, bool agent) {
        snprintf(out, PATH_MAX, "%s/%s%s.pid", dir, agent ? "agent-" : "", name);
}

void dev_log_path(char out[PATH_MAX], const char *dir, const char *name) {
        snprintf(out, PATH_MAX, "%s/%s.log", dir, name);
}

void dev_state_path(char out[PATH_MAX], const char *dir, const char *name) {
        snprintf(out, PATH_MAX, "%s/agent-%s.state", dir, name);
}

void dev_file_path(char out[PATH_MAX], const char *dir, const char *file) {
        snprintf(out, PATH_MAX, "%s/%s", dir, file);
}

bool dev_is_running(pid_t pid, const char *program) {
        char path[64], buf[512], *lp, *rp;
        ssize_t n;
        int fd;

        if (pid <= 0)
                return false;
        waitpid(pid, NULL, WNOHANG);
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return false;
        buf[n] = '\0';
        /* "pid (comm) S ...": comm may hold spaces and parentheses, the state follows the last ')' */
        lp = strchr(buf, '(');
        rp = strrchr(buf, ')');
        if (!lp || !rp || rp[1] != ' ' || rp[2] == 'Z' || rp[2] == 'X')
                return false;
        *rp = '\0';
        return strlen(lp + 1) == strnlen(program, COMM_LEN) && strncmp(lp + 1, program, COMM_LEN) == 0;
}

bool dev_child_exited(pid_t pid, char *how, size_t len) {
        char sig[FMT_BUF];
        int st;

        if (waitpid(pid, &st, WNOHANG) != pid)
                return false;
        if (WIFEXITED(st))
                snprintf(how, len, "exited with status %d", WEXITSTATUS(st));
        else
                snprintf(how, len, "was killed by %s", fmt_signal(WTERMSIG(st), sig, sizeof(sig)));
        return true;
}

int dev_find_program(const char *name, const char *install_dir, char *out, size_t len) {
        char self[PATH_MAX], *slash;
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

        if (n > 0) {
                self[n] = '\0';
                slash = strrchr(self, '/');
                if (slash) {
                        *slash = '\0';
                        snprintf(out, len, "%s/%s", self, name);
                        if (access(out, X_OK) == 0)
                                return 0;
                }
        }
        snprintf(out, len, "%s/%s", install_dir, name);
        return access(out, X_OK) == 0 ? 0 : -ENOENT;
}

/* In the child: detach, redirect, exec; an exec failure goes back as errno on errfd. A private
 * daemon makes its files for its owner alone (umask 077). */
static _Noreturn void child_exec(char *const argv[], bool private, int nullfd, int logfd, int errfd) {
        sigset_t none;
        int e;

        if (private)
                umask(077);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL); /* ignored by the CLI; exec would keep it ignored */
        if (setsid() >= 0 && dup2(nullfd, STDIN_FILENO) >= 0 && dup2(logfd, STDOUT_FILENO) >= 0 &&
            dup2(logfd, STDERR_FILENO) >= 0 && chdir("/") == 0)
                execv(argv[0], argv);
        e = errno;
        ssize_t ignored = write(errfd, &e, sizeof(e)); /* nothing else to do if it fails */
        (void)ignored;
        _exit(127);
}

int dev_start_program(const char *const argv[], bool private, const char *log, pid_t *pid, char *err, size_t errlen) {
        int logfd, nullfd, pipefd[2] = { -1, -1 }, e = 0;
        char *cmdline, when[FMT_BUF];
        ssize_t n;
        pid_t p;

        logfd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (logfd < 0 || nullfd < 0 || pipe2(pipefd, O_CLOEXEC) < 0) {
                e = errno;
                snprintf(err, errlen, "cannot start %s: %s%s%s", argv[0], logfd < 0 ? log : "", logfd < 0 ? ": " : "",
                         strerror(e));
                p = -1;
                goto out;
        }
        cmdline = fmt_argv((char *const *)argv);
        dprintf(logfd, "=== %s colony: starting %s\n", fmt_time(time(NULL) * (int64_t)1000000, when, sizeof(when)),
                cmdline ? cmdline : argv[0]);
        free(cmdline);
        p = fork();
        if (p == 0)
                child_exec((char *const *)argv, private, nullfd, logfd, pipefd[1]);
        e = p < 0 ? errno : 0;
        close(pipefd[1]);
        pipefd[1] = -1;
        while (p > 0 && (n = read(pipefd[0], &e, sizeof(e))) < 0 && errno == EINTR)
                ;
        if (p > 0 && e) /* the exec failed: the child is gone already */
                waitpid(p, NULL, 0);
        if (e)
                snprintf(err, errlen, "cannot start %s: %s", argv[0], strerror(e));
out:
        for (int i = 0; i < 2; i++)
                if (pipefd[i] >= 0)
                        close(pipefd[i]);
        if (logfd >= 0)
                close(logfd);
        if (nullfd >= 0)
                close(nullfd);
        if (e)
                return -e;
        *pid = p;
        return 0;
}

int dev_write_pid_file(const char *dir, const dev_daemon *d, bool agent, char *err, size_t errlen) {
        char path[PATH_MAX], text[32];
        int r;

        pid_path(path, dir, d->name, agent);
        snprintf(text, sizeof(text), "%d\n", (int)d->pid);
        r = file_write(path, text, 0644);
        if (r == 0 && chmod(path, 0644) < 0) /* whatever the umask: down may run as another admin */
                r = -errno;
        if (r < 0)
                snprintf(err, errlen, "cannot write %s: %s", path, strerror(-r));
        return r;
}

int64_t dev_read_number_file(const char *path, int64_t max) {
        char *text = NULL;
        int64_t v = 0;

        if (file_read_small(path, 0, &text) == 0 && units_parse_uint(text, max, &v) < 0)
                v = 0;
        free(text);
        return v;
}

static int compare_stopped(const void *a, const void *b) {
        return strcmp(((const dev_stopped *)a)->name, ((const dev_stopped *)b)->name);
}

/* Append an entry for a pid file to *set. Returns 0 or -ENOMEM. */
static int add_entry(dev_stopped **set, size_t *n, const char *dir, const char *name, bool agent) {
        char path[PATH_MAX];
        dev_stopped *s = realloc(*set, (*n + 1) * sizeof(**set));

        if (!s)
                return -ENOMEM;
        *set = s;
        s += (*n)++;
        *s = (dev_stopped){ .agent = agent, .cleanup = -1 };
        snprintf(s->name, sizeof(s->name), "%s", name);
        pid_path(path, dir, name, agent);
        s->pid = (pid_t)dev_read_number_file(path, INT32_MAX); /* its pid file's, 0 for none */
        return 0;
}

int dev_read_pid_files(const char *dir, dev_stopped **set, size_t *n) {
        char path[PATH_MAX];
        struct dirent *de;
        DIR *d = opendir(dir);
        int r = 0;

        *set = NULL;
        *n = 0;
        if (!d)
                return errno == ENOENT ? 0 : -errno;
        while (r == 0 && (de = readdir(d))) {
                size_t len = strlen(de->d_name);
                if (strncmp(de->d_name, "agent-", 6) == 0 && len > 10 && len - 10 <= DEV_NAME_MAX &&
                    strcmp(de->d_name + len - 4, ".pid") == 0) {
                        de->d_name[len - 4] = '\0';
                        r = add_entry(set, n, dir, de->d_name + 6, true);
                }
        }
        closedir(d);
        if (*n > 1)
                qsort(*set, *n, sizeof(**set), compare_stopped);
        pid_path(path, dir, DEV_CONTROLLER, false);
        if (r == 0 && access(path, F_OK) == 0)
                r = add_entry(set, n, dir, DEV_CONTROLLER, false);
        return r;
}

/* Run `colony-agent MODE --name NAME` (--cleanup, --stop-scope), its output into the agent's
 * log. Returns its exit status, or -1 when it could not run or had to be killed. */
static int run_agent_mode(const char *dir, const char *name, const char *mode) {
        char prog[PATH_MAX], log[PATH_MAX], state[PATH_MAX], unit[DEV_NAME_MAX + 32], err[256];
        const char *argv[] = { prog, mode, "--name", name, "--state-dir", state, "--scope", unit, NULL };
        int64_t deadline = clock_mono_ms() + CLEANUP_TIMEOUT_MS;
        pid_t pid;
        int st;

        if (dev_find_program(AGENT_PROG, COLONY_SBINDIR, prog, sizeof(prog)) < 0)
                return -1;
        dev_log_path(log, dir, name);
        dev_state_path(state, dir, name);
        agent_unit_name(unit, sizeof(unit), dir, name);
        if (dev_start_program(argv, false, log, &pid, err, sizeof(err)) < 0)
                return -1;
        while (waitpid(pid, &st, WNOHANG) == 0) {
                if (clock_mono_ms() > deadline) {
                        kill(pid, SIGKILL);
                        waitpid(pid, NULL, 0);
                        return -1;
                }
                dev_sleep_ms(POLL_MS);
        }
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Wait until no entry in state how still runs, up to ms. Deliberately deaf to interrupts. */
static void wait_gone(const dev_stopped *set, size_t n, const char *program, dev_stop_how how, int ms) {
        int64_t deadline = clock_mono_ms() + ms;

        for (;;) {
                bool any = false;
                for (size_t i = 0; i < n; i++)
                        any = any || (set[i].how == how && dev_is_running(set[i].pid, program));
                if (!any || clock_mono_ms() > deadline)
                        return;
                dev_sleep_ms(POLL_MS);
        }
}

void dev_signal_entry(dev_stopped *e, const char *program, int sig, dev_stop_how to) {
        if (dev_is_running(e->pid, program))
                e->how = kill(e->pid, sig) == 0 ? to : DEV_STUCK;
}

void dev_stop_set(const char *dir, dev_stopped *set, size_t n, const char *program) {
        char path[PATH_MAX];

        for (size_t i = 0; i < n; i++) {
                set[i].how = DEV_NOT_RUNNING;
                dev_signal_entry(&set[i], program, SIGTERM, DEV_STOPPED);
        }
        wait_gone(set, n, program, DEV_STOPPED, STOP_GRACE_MS);
        for (size_t i = 0; i < n; i++)
                if (set[i].how == DEV_STOPPED)
                        dev_signal_entry(&set[i], program, SIGKILL, DEV_KILLED);
        wait_gone(set, n, program, DEV_KILLED, KILL_WAIT_MS);
        for (size_t i = 0; i < n; i++) {
                if (set[i].how == DEV_KILLED && dev_is_running(set[i].pid, program))
                        set[i].how = DEV_STUCK;
                if (set[i].how == DEV_STUCK)
                        continue;
                /* An agent that did not stop on its own left its job cgroups behind. */
                if (set[i].agent && set[i].how != DEV_STOPPED)
                        set[i].cleanup = run_agent_mode(dir, set[i].name, "--cleanup");
                /* Its transient scope, where it needed one, is gone once this returns. */
                if (set[i].agent)
                        (void)run_agent_mode(dir, set[i].name, "--stop-scope");
                pid_path(path, dir, set[i].name, set[i].agent);
                unlink(path);
        }
}

void dev_remove_endpoints(const char *dir) {
        char path[PATH_MAX];

        dev_file_path(path, dir, "controller.sock");
        unlink(path);
        dev_file_path(path, dir, "controller.port");
        unlink(path);
}

int dev_down(const char *dir, dev_stopped **out, size_t *n, char *err, size_t errlen) {
        dev_stopped *set;
        size_t count, nagents = 0;
        int r;

        r = dev_read_pid_files(dir, &set, &count);
        if (r < 0) {
                snprintf(err, errlen, "cannot read %s: %s", dir, strerror(-r));
                free(set);
                return r;
        }
        while (nagents < count && set[nagents].agent)
                nagents++;
        /* Agents first: a controller that goes first would only see them as lost. */
        dev_stop_set(dir, set, nagents, AGENT_PROG);
        dev_stop_set(dir, set + nagents, count - nagents, CONTROLLER_PROG);
        if (count == nagents || set[nagents].how != DEV_STUCK)
                dev_remove_endpoints(dir);
        *out = set;
        *n = count;
        return 0;
}

const char *dev_log_tail(const char *path, int lines, char *buf, size_t len) {
        char *start;
        ssize_t n = -1;
        off_t size;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd >= 0 && (size = lseek(fd, 0, SEEK_END)) >= 0)
                n = pread(fd, buf, len - 1, size > (off_t)len - 1 ? size - (off_t)len + 1 : 0);
        if (fd >= 0)
                close(fd);
        if (n <= 0)
                return NULL;
        buf[n] = '\0';
        while (n > 0 && buf[n - 1] == '\n')
                buf[--n] = '\0';
        for (start = buf + n; start > buf; start--)
                if (start[-1] == '\n' && --lines == 0)
                        break;
        return start;
}

void dev_print_log_tail(const char *path, int lines, FILE *f) {
        char buf[8192];
        const char *start = dev_log_tail(path, lines, buf, sizeof(buf)), *end;

        if (!start) {
                fprintf(f, "--- %s is empty or unreadable\n", path);
                return;
        }
        fprintf(f, "--- last lines of %s:\n", path);
        for (; *start; start = *end ? end + 1 : end) {
                end = strchrnul(start, '\n');
                fprintf(f, "    %.*s\n", (int)(end - start), start);
        }
}
