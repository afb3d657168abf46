/* jobpool.h - the controller's job records cut from chunks of 128 (a slab), so that making or
 * freeing a job costs no malloc or free (the simulator makes and frees 25 million) and live jobs
 * lie close together in memory: a fresh chunk is cut in the order jobs are made (ids ascending),
 * records released go back to their chunk and are taken again before a new chunk is cut, and a
 * chunk whose records are all released goes back to malloc. Records made elsewhere (a restart's,
 * read from the store) are malloc'ed: jobpool_release frees either kind. A zeroed jobpool is
 * empty and holds no memory. */
#pragma once
#include "job.h"
#include <stddef.h>

struct jobchunk;

typedef struct jobpool {
        struct jobchunk *open; /* the chunks with a record free, most recently opened first */
} jobpool;

/* A zeroed record, the pool's (its pool_chunk set: keep it when assigning the record whole), or
 * NULL when out of memory. */
job *jobpool_get(jobpool *p);
/* Free j's strings (job_free) and its record: back to p when it was cut from p, else free(). */
void jobpool_release(jobpool *p, job *j);
/* Free the chunks left; every record must have been released. */
void jobpool_free(jobpool *p);
