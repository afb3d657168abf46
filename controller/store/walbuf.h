/* walbuf.h - an SQLite VFS that writes each commit's write-ahead log in one system call.
 *
 * SQLite appends a commit to its write-ahead log one frame at a time, and each frame in two
 * writes (a 24-byte header, then the page): a submission's commit, three pages, is six pwrite
 * calls. Over the default VFS, "colony-walbuf" gathers the writes to a log file while they are
 * contiguous and writes them in one call when something needs them in the file: the end of a
 * commit's last frame (before SQLite publishes the commit in shared memory, where a second
 * connection, the checkpointer's, may read of it at once), a read, a size, a sync, a
 * truncation, a write elsewhere in the file, the close, or walbuf_flush, which the job store
 * calls right after each COMMIT. Every other file (the database, its shared memory) is the
 * default VFS's own. */
#pragma once
#include <sqlite3.h>

#define WALBUF_VFS "colony-walbuf"

/* Register the VFS (once; it is not made the default). Returns an SQLite result code. */
int walbuf_register(void);
/* Write what the log of db's main database holds back; a no-op when nothing is held or db does
 * not use this VFS. Returns an SQLite result code (SQLITE_OK). After a failure every later write
 * to that log fails too: the commit it held may not be reported as done. */
int walbuf_flush(sqlite3 *db);
/* Make ready to sync the log of db's main database outside SQLite, in another thread: write what
 * is held and the file's tail ahead (as before SQLite's own syncs), and set *fd to a descriptor
 * of the log (borrowed; open until db closes) whose fdatasync makes every commit so far durable.
 * Returns SQLITE_OK, SQLITE_NOTFOUND when db's log is not open through this VFS, or the write's
 * error (after which, as with walbuf_flush, the log takes no more writes). */
int walbuf_sync_prepare(sqlite3 *db, int *fd);
