/* sdscope.c - the agent's transient scope, through systemd's D-Bus API (see sdscope.h).
 *
 * As root we talk to systemd over its private socket, as systemctl and systemd-run do: it
 * needs no D-Bus daemon (a minimal host may have none). Each call queues a job; we wait for
 * its JobRemoved signal, which systemd sends to every direct connection and, on the system
 * bus, to the client that queued the job. */
#include "sdscope.h"
#include "clock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#define SD_DEST    "org.freedesktop.systemd1"
#define SD_PATH    "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"
#define SD_PRIVATE "unix:path=/run/systemd/private"
/* Far above the few hundred ms a scope takes even in an emulated guest; only for failures. */
#define JOB_TIMEOUT_US (120 * 1000000ULL)
/* A stop's SIGTERM, then SIGKILL after this: well inside colony down's wait for --cleanup. */
#define STOP_TIMEOUT_US (10 * 1000000ULL)

typedef struct job_wait {
        const char *path; /* the job we wait for */
        char result[32];  /* its JobRemoved result ("done", "failed", ...), "" until then */
} job_wait;

static int open_bus(sd_bus **bus) {
        int r;

        if (geteuid() == 0) {
                if ((r = sd_bus_new(bus)) < 0)
                        return r;
                if ((r = sd_bus_set_address(*bus, SD_PRIVATE)) >= 0 && (r = sd_bus_start(*bus)) >= 0)
                        return 0;
                *bus = sd_bus_unref(*bus);
        }
        return sd_bus_open_system(bus);
}

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        job_wait *w = userdata;
        const char *path = NULL, *unit = NULL, *result = NULL;
        uint32_t id;

        (void)error;
        if (sd_bus_message_read(m, "uoss", &id, &path, &unit, &result) >= 0 && w->path && strcmp(path, w->path) == 0)
                snprintf(w->result, sizeof(w->result), "%s", result);
        return 0;
}

/* Send m (a Manager call that returns a job), then wait for that job to end. Returns 0 once it
 * ended "done", -ENOENT when systemd knows no such unit, or -errno with err. */
static int call_and_wait(sd_bus *bus, sd_bus_message *m, const char *what, char *err, size_t errlen) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        sd_bus_slot *slot = NULL;
        job_wait w = { 0 };
        uint64_t deadline = (uint64_t)clock_mono_usec() + JOB_TIMEOUT_US;
        int r;

        /* Before the call, so that the signal cannot pass unseen. */
        r = sd_bus_match_signal(bus, &slot, NULL, SD_PATH, SD_MANAGER, "JobRemoved", on_job_removed, &w);
        if (r >= 0 && (r = sd_bus_call(bus, m, JOB_TIMEOUT_US, &e, &reply)) < 0) {
                if (sd_bus_error_has_name(&e, "org.freedesktop.systemd1.NoSuchUnit"))
                        r = -ENOENT;
                /* A dead agent's scope lives on while its jobs do: the caller takes it over. */
                if (sd_bus_error_has_name(&e, "org.freedesktop.systemd1.UnitExists"))
                        r = -EEXIST;
                snprintf(err, errlen, "%s: %s", what, e.message ? e.message : strerror(-r));
        } else if (r >= 0 && (r = sd_bus_message_read(reply, "o", &w.path)) < 0)
                snprintf(err, errlen, "%s: bad reply from systemd: %s", what, strerror(-r));
        else if (r < 0)
                snprintf(err, errlen, "%s: cannot watch systemd's jobs: %s", what, strerror(-r));
        while (r >= 0 && !*w.result) {
                uint64_t t = (uint64_t)clock_mono_usec();
                if (t >= deadline) {
                        r = -ETIMEDOUT;
                        snprintf(err, errlen, "%s: systemd's job %s did not end in %llu s", what, w.path,
                                 JOB_TIMEOUT_US / 1000000);
                } else if ((r = sd_bus_process(bus, NULL)) == 0)
                        r = sd_bus_wait(bus, deadline - t);
                if (r < 0 && r != -ETIMEDOUT)
                        snprintf(err, errlen, "%s: lost systemd: %s", what, strerror(-r));
        }
        if (r >= 0 && strcmp(w.result, "done") != 0) {
                r = -EIO;
                snprintf(err, errlen, "%s: systemd's job ended '%s' (journalctl -xe says why)", what, w.result);
        }
        sd_bus_slot_unref(slot);
        sd_bus_message_unref(reply);
        sd_bus_error_free(&e);
        return r < 0 ? r : 0;
}

/* The arguments of StartTransientUnit after the name: what `systemd-run --scope -p
 * Delegate=yes` asks for, with this process as the scope's; NULL description: StopUnit's. */
static int append_args(sd_bus_message *m, const char *description) {
        int r;

        if (!description)
                return sd_bus_message_append(m, "s", "replace");
        r = sd_bus_message_append(m, "s", "fail");
        if (r >= 0)
                r = sd_bus_message_append(m, "a(sv)", 5, "Description", "s", description, "Delegate", "b", 1,
                                          "CollectMode", "s", "inactive-or-failed", "TimeoutStopUSec", "t",
                                          STOP_TIMEOUT_US, "PIDs", "au", 1, (uint32_t)getpid());
        return r < 0 ? r : sd_bus_message_append(m, "a(sa(sv))", 0);
}

/* Start the transient scope unit (description set) or stop unit, and wait for the job. */
static int unit_job(const char *unit, const char *description, char *err, size_t errlen) {
        const char *method = description ? "StartTransientUnit" : "StopUnit";
        sd_bus_message *m = NULL;
        sd_bus *bus = NULL;
        char what[300];
        int r;

        snprintf(what, sizeof(what), "%s %s", description ? "start the transient scope" : "stop", unit);
        if ((r = open_bus(&bus)) < 0) {
                snprintf(err, errlen, "%s: cannot connect to systemd: %s", what, strerror(-r));
                return r;
        }
        r = sd_bus_message_new_method_call(bus, &m, SD_DEST, SD_PATH, SD_MANAGER, method);
        if (r >= 0)
                r = sd_bus_message_append(m, "s", unit);
        if (r >= 0)
                r = append_args(m, description);
        if (r < 0)
                snprintf(err, errlen, "%s: %s", what, strerror(-r));
        else
                r = call_and_wait(bus, m, what, err, errlen);
        sd_bus_message_unref(m);
        sd_bus_flush_close_unref(bus);
        return r;
}

bool sdscope_available(void) { return sd_booted() > 0; }

/* Move this process into subcgroup of unit, a running scope with Delegate=yes. */
static int attach(const char *unit, const char *subcgroup, char *err, size_t errlen) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus *bus = NULL;
        int r = open_bus(&bus);

        if (r < 0)
                snprintf(err, errlen, "join the scope %s: cannot connect to systemd: %s", unit, strerror(-r));
        else if ((r = sd_bus_call_method(bus, SD_DEST, SD_PATH, SD_MANAGER, "AttachProcessesToUnit", &e, NULL, "ssau",
                                         unit, subcgroup, 1, (uint32_t)getpid())) < 0)
                snprintf(err, errlen, "join the scope %s at %s: %s", unit, subcgroup,
                         e.message ? e.message : strerror(-r));
        sd_bus_error_free(&e);
        sd_bus_flush_close_unref(bus);
        return r;
}

int sdscope_enter(const char *unit, const char *description, const char *leaf, bool *joined, char *err, size_t errlen) {
        int r = unit_job(unit, description, err, errlen);

        *joined = false;
        if (r != -EEXIST)
                return r;
        if ((r = attach(unit, leaf, err, errlen)) == 0)
                *joined = true;
        return r;
}

int sdscope_stop(const char *unit, char *err, size_t errlen) {
        int r = unit_job(unit, NULL, err, errlen);

        return r == -ENOENT ? 0 : r;
}
