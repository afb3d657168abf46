/* jobpool.c - job records cut from chunks of 128 (see jobpool.h). */
#include "jobpool.h"
#include <stdlib.h>
#include <string.h>

/* 128 records of about 480 bytes: 60 KiB, below glibc's mmap threshold, so that a chunk freed
 * is reused by the next one instead of unmapped. */
#define CHUNK_RECORDS 128

struct jobchunk {
        struct jobchunk *prev, *next; /* in p->open while a record is free */
        job *released;                /* released records, linked through their first bytes */
        size_t live, cut;             /* records in use; records ever cut from rec */
        job rec[CHUNK_RECORDS];
};

static void open_chunk(jobpool *p, struct jobchunk *c) {
        c->prev = NULL;
        c->next = p->open;
        if (p->open)
                p->open->prev = c;
        p->open = c;
}

static void close_chunk(jobpool *p, struct jobchunk *c) {
        if (c->prev)
                c->prev->next = c->next;
        else
                p->open = c->next;
        if (c->next)
                c->next->prev = c->prev;
}

job *jobpool_get(jobpool *p) {
        struct jobchunk *c = p->open;
        if (!c) {
                if (!(c = malloc(sizeof(*c))))
                        return NULL;
                c->released = NULL;
                c->live = c->cut = 0;
                open_chunk(p, c);
        }
        job *j = c->released;
        if (j)
                memcpy(&c->released, (const void *)j, sizeof(c->released)); /* the link its first bytes hold */
        else
                j = &c->rec[c->cut++];
        if (++c->live == CHUNK_RECORDS)
                close_chunk(p, c);
        memset(j, 0, sizeof(*j));
        j->pool_chunk = c;
        return j;
}

void jobpool_release(jobpool *p, job *j) {
        struct jobchunk *c = j->pool_chunk;
        job_free(j);
        if (!c) {
                free(j);
                return;
        }
        if (c->live-- == CHUNK_RECORDS)
                open_chunk(p, c);
        if (c->live == 0 && (c->prev || c->next)) { /* the last open chunk stays, for the next job */
                close_chunk(p, c);
                free(c);
                return;
        }
        memcpy((void *)j, &c->released, sizeof(c->released)); /* a link in its first bytes, not a job */
        c->released = j;
}

void jobpool_free(jobpool *p) {
        while (p->open) {
                struct jobchunk *c = p->open;
                close_chunk(p, c);
                free(c);
        }
}
