/* walbuf.h - an SQLite VFS that writes each commit's write-ahead log in one system call.
 *
 * SQLite appends a commit to its write-ahead log one frame at a time, and each frame in two
 * writes (a 24-byte header, then the page): a submission's commit, three pages, is six pwrite
 * calls. Over the default VFS, "colony-walbuf" gathers the writes to a log file while they are
 * contiguous and writes them in one call when something needs them in the file: a read, a size,
 * a sync, a truncation, a write elsewhere in the file, the close, or walbuf_flush, which the job
 * store calls right after each COMMIT so that a commit is in the kernel before any reply says
 * so. Every other file (the database, its shared memory) is the default VFS's own. */
#pragma once
#include <sqlite3.h>

#define WALBUF_VFS "colony-walbuf"

/* Register the VFS (once; it is not made the default). Returns an SQLite result code. */
int walbuf_register(void);
/* Write what the log of db's main database holds back; a no-op when nothing is held or db does
 * not use this VFS. Returns an SQLite result code (SQLITE_OK). After a failure every later write
 * to that log fails too: the commit it held may not be reported as done. */
int walbuf_flush(sqlite3 *db);
