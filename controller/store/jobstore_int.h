/* jobstore_int.h - what jobstore.c lends the files of the store's other tables. Internal to
 * controller/store. */
#pragma once
#include "jobstore.h"
#include <sqlite3.h>

/* The store's connection. */
sqlite3 *jobstore_db(jobstore *s);
/* After a step that returned rc outside a batch, write the log out (walbuf); returns rc, or
 * SQLITE_IOERR when that write failed. */
int jobstore_flush_if_committed(jobstore *s, int rc);
