/* state_int.h - what the state machine's own files share (state.c, arrec.c): helpers internal to
 * it, not for its callers (state.h is theirs). */
#pragma once
#include "arrays.h"
#include "state.h"
#include <sys/types.h>

/* --- state.c --- */

/* The position of the first of v[lo..hi), in id order, whose id is >= id. O(log n). */
size_t ctl_jobs_rank(job *const *v, size_t lo, size_t hi, uint64_t id);
/* Whether j, an entry of s, is a member of it (not a stale entry). */
bool ctl_idset_member(const ctl_idset *s, const job *j);
/* The position in s of the first entry whose id is >= id. O(log n). */
size_t ctl_idset_rank(const ctl_idset *s, uint64_t id);
/* The live jobs of uid, added empty when add is set and they are missing; NULL when missing. */
ctl_idset *ctl_user_jobs_of(ctl_state *st, uid_t uid, bool add);
/* Count delta jobs of uid in group (NULL: none) in or out of the pending tallies. */
void ctl_tally_by(ctl_state *st, uid_t uid, const char *group, ssize_t delta);
/* Make j's default output path when none was given. Returns 0 or -ENOMEM. */
int ctl_default_output(job *j);
/* Store the n jobs made with their "submitted" events. Returns 0 or -errno. */
int ctl_persist_jobs(ctl_state *st, job **made, size_t n);
/* Make room for n more pending jobs of uid and their index entries. Returns 0 or -ENOMEM. */
int ctl_reserve_jobs(ctl_state *st, uid_t uid, size_t n);
/* The reservation of n jobs of a ends (made, or never to be). */
void ctl_unreserve(ctl_state *st, const ctl_array *a, size_t n);
/* Make, persist and queue up to max more jobs of a (ctl_array_more without the record). */
int ctl_make_slice(ctl_state *st, ctl_array *a, size_t max, char err[PROTO_ERRLEN]);

/* --- arrec.c: arrays as one record while their tasks wait --- */

/* Keep each record's window of tasks made and pending, before a pass. */
void ctl_arecs_topup(ctl_state *st);
/* Whether a record has tasks left but none made and pending: the pass took them all. */
bool ctl_arecs_exhausted(const ctl_state *st);
/* The first task of a restored record is restored: it owns it, and it counts against the caps. */
void ctl_arec_attach(ctl_state *st, ctl_arec *a, job *owner);
/* ctl_array_more for an array of more than ARRAY_WINDOW tasks: its first slice, then its record. */
int ctl_array_record(ctl_state *st, ctl_array *a, size_t max, char err[PROTO_ERRLEN]);
/* The tasks not made yet of every array bulk cancel f names whole end, counted in counts. */
void ctl_cancel_unmade(ctl_state *st, const ctl_cancel_filter *f, uid_t uid, int64_t now, ctl_cancel_counts *counts);
