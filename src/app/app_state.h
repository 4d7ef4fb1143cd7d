/* src/app/app_state.h - states on an app (app_state.c): the transition
 * step hooked into the app's schedule order, and the "weft.states" plugin.
 * SPDX-License-Identifier: MIT
 */
#ifndef WF_APP_STATE_H
#define WF_APP_STATE_H

#include "app/app.h"

/* Makes the app run the world's state transition step: an exclusive
 * system in StateTransition and, before the startup order has run, in a
 * StateTransitionStartup label placed before PreStartup. Idempotent.
 * Errors recorded (WRONG_PHASE while StateTransition runs, OUT_OF_MEMORY). */
weft_status wf_app_states_hook(weft_app *a);
/* Adds the "weft.states" plugin, whose build is wf_app_states_hook
 * (ALREADY_EXISTS when added before). */
weft_status wf_app_add_states_plugin(weft_app *a);

#endif
