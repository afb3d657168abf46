/* ctl_noop.h - actions for unit tests that drive the controller's state and look at the state
 * alone: nothing is persisted, launched, cancelled or told. One test file includes it. */
#pragma once
#include "state.h"

static int noop_persist(void *u, const job *j) {
        (void)u, (void)j;
        return 0;
}

static void noop_launch(void *u, ctl_node *n, const job *j) { (void)u, (void)n, (void)j; }

static void noop_cancel(void *u, ctl_node *n, const job *j, int grace_ms) { (void)u, (void)n, (void)j, (void)grace_ms; }

static void noop_terminal(void *u, const job *j) { (void)u, (void)j; }

static const ctl_actions ctl_noop_actions = {
        .persist = noop_persist, .launch = noop_launch, .cancel = noop_cancel, .terminal = noop_terminal
};
