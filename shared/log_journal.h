/* log_journal.h - the journal as log.h's sink, for the daemons. Apart from log.c so that only
 * the programs that link it (colony_journal) load libsystemd. */
#pragma once

/* log_open(ident, ..., max_priority) with the journal as the sink when $JOURNAL_STREAM names
 * stderr (a systemd service's), stderr otherwise. Returns 1 for the journal, 0 for stderr. */
int log_open_journal(const char *ident, int max_priority);
