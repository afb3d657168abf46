/* log_journal.c - the journal sink of log.h (log_journal.h). */
#include "log_journal.h"
#include "log.h"
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

/* True when $JOURNAL_STREAM ("dev:ino") names our stderr. A child of a systemd service
 * inherits the variable even when its stderr goes elsewhere, so the variable alone is not enough. */
static int stderr_is_journal(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;
        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0)
                return 0;
        return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

static void journal_sink(int priority, const char *ident, const char *text) {
        sd_journal_send("MESSAGE=%s", text, "PRIORITY=%d", priority, "SYSLOG_IDENTIFIER=%s", ident, NULL);
}

int log_open_journal(const char *ident, int max_priority) {
        int journal = stderr_is_journal();
        log_open(ident, journal ? journal_sink : NULL, max_priority);
        return journal;
}
