/* walbuf.c - one write per commit to SQLite's write-ahead log (see walbuf.h). */
#include "walbuf.h"
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

/* The default VFS writes at most 128 KiB - 1 bytes per call (it masks the length with
 * 0x1ffff), so what is held goes out in pieces of 64 KiB: one for a submission's commit. */
enum {
        WALBUF_MAX = 64 << 10,
        WALBUF_GROW = 4 << 20,    /* the file is written ahead of the log in steps of this size */
        WALBUF_KICK = 1 << 20,    /* unsynced bytes after which the kernel is asked to write them */
        WALBUF_FRAME_HEADER = 24, /* a frame: this header, then a page */
};

/* Before a sync, the file's tail is written with zeros, in steps, ahead of the log: later
 * syncs then find the log's blocks allocated and the file's size unchanged and write data
 * alone, not also the filesystem's journal (on ext4 here an fdatasync after an append takes
 * about 1.7x as long as one after an overwrite). PostgreSQL fills its log segments with zeros
 * for the same reason. Frames past the log's end are zeros, which SQLite's recovery reads as
 * its end (a frame's salt must match the header's). Without syncs (sync_commits = no) nothing
 * is written ahead. */
static const char zeros[WALBUF_MAX];

/* A log file: what SQLite wrote and the file does not have yet, then the default VFS's file. */
typedef struct walbuf_file {
        sqlite3_file base; /* pMethods = &log_methods */
        sqlite3_file *real;
        char *buf;
        size_t len, cap;
        sqlite3_int64 off;  /* where buf[0] goes in the file */
        sqlite3_int64 size; /* the file's size */
        int error;          /* a failed write of buf: every later write fails with it */
        int kick_fd;        /* the file again, for sync_file_range and walbuf_sync_prepare (-1: none) */
        size_t unsynced;    /* bytes written since the last sync or kick */
        bool commit_frame;  /* the last write was the header of a commit's last frame */
} walbuf_file;

/* Where the default VFS's file starts, behind ours, aligned for whatever it holds. */
#define REAL_OFFSET ((sizeof(walbuf_file) + alignof(max_align_t) - 1) / alignof(max_align_t) * alignof(max_align_t))

static sqlite3_vfs vfs;
static sqlite3_vfs *default_vfs;

/* Write zeros from the file's end to the first step boundary past end. */
static int grow(walbuf_file *f, sqlite3_int64 end) {
        sqlite3_int64 to = (end + WALBUF_GROW - 1) / WALBUF_GROW * WALBUF_GROW;
        while (f->size < to) {
                int n = to - f->size < WALBUF_MAX ? (int)(to - f->size) : WALBUF_MAX;
                int rc = f->real->pMethods->xWrite(f->real, zeros, n, f->size);
                if (rc != SQLITE_OK)
                        return rc;
                f->size += n;
        }
        return SQLITE_OK;
}

/* Without syncs (sync_commits = no) the log's pages would stay dirty until the checkpoint's
 * fdatasync, which would then write tens of megabytes while the loop waits for it (102 ms for
 * 64 MiB here). Each megabyte is handed to the kernel to write now, in the background
 * (sync_file_range: it does not wait), as PostgreSQL's wal_writer_flush_after does. */
static void kick(walbuf_file *f, size_t written) {
        f->unsynced += written;
        if (f->unsynced < WALBUF_KICK || f->kick_fd < 0)
                return;
        (void)sync_file_range(f->kick_fd, 0, 0, SYNC_FILE_RANGE_WRITE); /* a hint: a failure costs time only */
        f->unsynced = 0;
}

static int flush(walbuf_file *f) {
        if (f->error)
                return f->error;
        if (f->len == 0)
                return SQLITE_OK;
        sqlite3_int64 end = f->off + (sqlite3_int64)f->len;
        int rc = SQLITE_OK;
        for (size_t done = 0; done < f->len && rc == SQLITE_OK; done += WALBUF_MAX) {
                size_t n = f->len - done < WALBUF_MAX ? f->len - done : WALBUF_MAX;
                rc = f->real->pMethods->xWrite(f->real, f->buf + done, (int)n, f->off + (sqlite3_int64)done);
        }
        if (rc == SQLITE_OK && end > f->size)
                f->size = end;
        if (rc != SQLITE_OK)
                return f->error = rc;
        kick(f, f->len);
        f->off = end;
        f->len = 0;
        return SQLITE_OK;
}

static int log_close(sqlite3_file *file) {
        walbuf_file *f = (walbuf_file *)file;
        int rc = flush(f), closed = f->real->pMethods->xClose(f->real);
        if (f->kick_fd >= 0)
                close(f->kick_fd);
        free(f->buf);
        f->buf = NULL;
        return rc != SQLITE_OK ? rc : closed;
}

static int log_read(sqlite3_file *file, void *data, int amount, sqlite3_int64 offset) {
        walbuf_file *f = (walbuf_file *)file;
        int rc = flush(f);
        return rc != SQLITE_OK ? rc : f->real->pMethods->xRead(f->real, data, amount, offset);
}

/* Whether data is the header of a commit's last frame: 24 bytes (the log's own header has 32)
 * whose second word, the database's size in pages after the commit, is not 0. */
static bool is_commit_header(const unsigned char *data, int amount) {
        return amount == WALBUF_FRAME_HEADER && (data[4] | data[5] | data[6] | data[7]) != 0;
}

/* A commit's frames go to the file as soon as its last frame is written, before SQLite
 * publishes the commit in the log's index in shared memory: another connection (the
 * checkpointer's, jobstore_checkpoint_apart) reads the frames the index names from the file. */
static int log_write(sqlite3_file *file, const void *data, int amount, sqlite3_int64 offset) {
        walbuf_file *f = (walbuf_file *)file;
        size_t n = (size_t)amount;
        bool ends_commit = f->commit_frame;
        int rc;
        f->commit_frame = is_commit_header(data, amount);
        if (f->len > 0 && offset != f->off + (sqlite3_int64)f->len && (rc = flush(f)) != SQLITE_OK)
                return rc;
        if (f->error)
                return f->error;
        if (f->len == 0)
                f->off = offset;
        if (f->len + n > f->cap) {
                size_t cap = f->cap ? f->cap : 64 * 1024;
                while (cap < f->len + n)
                        cap *= 2;
                char *buf = realloc(f->buf, cap);
                if (!buf)
                        return SQLITE_IOERR_NOMEM;
                f->buf = buf;
                f->cap = cap;
        }
        memcpy(f->buf + f->len, data, n);
        f->len += n;
        return f->len >= WALBUF_MAX || ends_commit ? flush(f) : SQLITE_OK;
}

static int log_truncate(sqlite3_file *file, sqlite3_int64 size) {
        walbuf_file *f = (walbuf_file *)file;
        int rc = flush(f);
        if (rc == SQLITE_OK && (rc = f->real->pMethods->xTruncate(f->real, size)) == SQLITE_OK)
                f->size = size;
        return rc;
}

/* Write what is held, and the file's tail ahead of the log: what a sync needs first. */
static int before_sync(walbuf_file *f) {
        int rc = flush(f);
        if (rc == SQLITE_OK && f->size - f->off < WALBUF_GROW / 2)
                rc = grow(f, f->off + WALBUF_GROW / 2);
        f->unsynced = 0;
        return rc;
}

static int log_sync(sqlite3_file *file, int flags) {
        walbuf_file *f = (walbuf_file *)file;
        int rc = before_sync(f);
        return rc != SQLITE_OK ? rc : f->real->pMethods->xSync(f->real, flags);
}

static int log_size(sqlite3_file *file, sqlite3_int64 *size) {
        walbuf_file *f = (walbuf_file *)file;
        int rc = flush(f);
        return rc != SQLITE_OK ? rc : f->real->pMethods->xFileSize(f->real, size);
}

static int log_lock(sqlite3_file *file, int level) {
        walbuf_file *f = (walbuf_file *)file;
        return f->real->pMethods->xLock(f->real, level);
}

static int log_unlock(sqlite3_file *file, int level) {
        walbuf_file *f = (walbuf_file *)file;
        return f->real->pMethods->xUnlock(f->real, level);
}

static int log_check_lock(sqlite3_file *file, int *out) {
        walbuf_file *f = (walbuf_file *)file;
        return f->real->pMethods->xCheckReservedLock(f->real, out);
}

static int log_control(sqlite3_file *file, int op, void *arg) {
        walbuf_file *f = (walbuf_file *)file;
        int rc = flush(f); /* a size hint, say, may look at the file */
        return rc != SQLITE_OK ? rc : f->real->pMethods->xFileControl(f->real, op, arg);
}

static int log_sector_size(sqlite3_file *file) {
        walbuf_file *f = (walbuf_file *)file;
        return f->real->pMethods->xSectorSize(f->real);
}

static int log_device(sqlite3_file *file) {
        walbuf_file *f = (walbuf_file *)file;
        return f->real->pMethods->xDeviceCharacteristics(f->real);
}

/* Version 1: SQLite maps no log into memory, and its shared memory belongs to the database. */
static const sqlite3_io_methods log_methods = {
        .iVersion = 1,
        .xClose = log_close,
        .xRead = log_read,
        .xWrite = log_write,
        .xTruncate = log_truncate,
        .xSync = log_sync,
        .xFileSize = log_size,
        .xLock = log_lock,
        .xUnlock = log_unlock,
        .xCheckReservedLock = log_check_lock,
        .xFileControl = log_control,
        .xSectorSize = log_sector_size,
        .xDeviceCharacteristics = log_device,
};

static int walbuf_open(sqlite3_vfs *self, sqlite3_filename name, sqlite3_file *file, int flags, int *out_flags) {
        (void)self;
        if (!(flags & SQLITE_OPEN_WAL)) /* the default VFS's file, in place */
                return default_vfs->xOpen(default_vfs, name, file, flags, out_flags);
        walbuf_file *f = (walbuf_file *)file;
        *f = (walbuf_file){ .real = (sqlite3_file *)((char *)file + REAL_OFFSET), .kick_fd = -1 };
        int rc = default_vfs->xOpen(default_vfs, name, f->real, flags, out_flags);
        if (rc == SQLITE_OK && (rc = f->real->pMethods->xFileSize(f->real, &f->size)) != SQLITE_OK)
                f->real->pMethods->xClose(f->real);
        /* SQLite locks the database and its shared memory, never the log: closing this second
         * descriptor releases no lock of its. */
        if (rc == SQLITE_OK)
                f->kick_fd = open(name, O_RDONLY | O_CLOEXEC);
        f->base.pMethods = rc == SQLITE_OK ? &log_methods : NULL; /* NULL: SQLite calls no xClose */
        return rc;
}

int walbuf_register(void) {
        if (sqlite3_vfs_find(WALBUF_VFS))
                return SQLITE_OK;
        if (!(default_vfs = sqlite3_vfs_find(NULL)))
                return SQLITE_ERROR;
        /* The default VFS's other methods take it as their first argument only for its
         * mxPathname, which the copy keeps. */
        vfs = *default_vfs;
        vfs.szOsFile = (int)REAL_OFFSET + default_vfs->szOsFile;
        vfs.zName = WALBUF_VFS;
        vfs.pNext = NULL;
        vfs.xOpen = walbuf_open;
        return sqlite3_vfs_register(&vfs, 0);
}

/* The log of db's main database when it is open through this VFS, else NULL. */
static walbuf_file *log_of(sqlite3 *db) {
        sqlite3_file *file = NULL;
        if (sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &file) != SQLITE_OK || !file ||
            file->pMethods != &log_methods)
                return NULL;
        return (walbuf_file *)file;
}

int walbuf_flush(sqlite3 *db) {
        walbuf_file *f = log_of(db);
        return f ? flush(f) : SQLITE_OK;
}

int walbuf_sync_prepare(sqlite3 *db, int *fd) {
        walbuf_file *f = log_of(db);
        if (!f || f->kick_fd < 0)
                return SQLITE_NOTFOUND;
        int rc = before_sync(f);
        if (rc == SQLITE_OK)
                *fd = f->kick_fd;
        return rc;
}
