/* jobtab.c - the agent's jobs by id (see jobtab.h). */
#include "jobtab.h"
#include "agent-internal.h"
#include <errno.h>
#include <stddef.h>

_Static_assert(offsetof(agent_job, id) == 0, "a job's id is its key in the jobtab (idmap.h)");

int jobtab_reserve(jobtab *t) { return idmap_reserve(&t->ids, 1); }

int jobtab_insert(jobtab *t, agent_job *j) {
        int r;

        if (idmap_find(&t->ids, j->id))
                return -EEXIST;
        if ((r = idmap_add(&t->ids, j)) < 0)
                return r;
        j->prev = NULL;
        j->next = t->head;
        if (t->head)
                t->head->prev = j;
        t->head = j;
        j->in_table = true;
        return 0;
}

agent_job *jobtab_find(const jobtab *t, uint64_t id) { return idmap_find(&t->ids, id); }

void jobtab_remove(jobtab *t, agent_job *j) {
        (void)idmap_remove(&t->ids, j->id);
        (void)idmap_fit(&t->ids); /* a failure keeps the slots: still a correct map */
        if (j->prev)
                j->prev->next = j->next;
        else
                t->head = j->next;
        if (j->next)
                j->next->prev = j->prev;
        j->prev = j->next = NULL;
        j->in_table = false;
}

agent_job *jobtab_first(const jobtab *t) { return t->head; }

size_t jobtab_count(const jobtab *t) { return t->ids.n; }

void jobtab_free(jobtab *t) {
        idmap_free(&t->ids);
        *t = (jobtab){ 0 };
}
