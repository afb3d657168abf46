/* nofile.h - the open files limit: daemons take the hard limit, the jobs they start get back
 * the soft one they would have had. */
#pragma once
#include <sys/resource.h>

/* Raise this process's soft RLIMIT_NOFILE to its hard limit (a descriptor per connection or
 * per watched job; the soft 1024 is for select() users, and the daemons use none). *before
 * gets the limits as they were, for the processes the caller starts. Logs a raise and a
 * failure. Returns 0, or -errno when the limit cannot be read or raised (*before is then the
 * current limit, or {0, 0}). */
int nofile_raise(struct rlimit *before);
