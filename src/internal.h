/* src/internal.h - private umbrella header, in layer order.
 * SPDX-License-Identifier: MIT
 *
 * core (no ECS knowledge) <- storage <- query | command | events <- world
 * <- system <- schedule <- app <- diag <- api; task (threads, deque, pool)
 * depends on core only. A module includes only the layers below it; public
 * entry points live only in src/api/. This header gathers the layers up to
 * the world; system/system.h, schedule/schedule.h, app/app.h and
 * diag/diag.h are included where needed.
 */
#ifndef WF_INTERNAL_H
#define WF_INTERNAL_H

#include "weft.h"

#include "core/config.h"
#include "core/check.h"
#include "core/status.h"
#include "core/alloc.h"
#include "core/os.h"

#include "storage/component_registry.h"
#include "storage/column.h"
#include "storage/table.h"
#include "storage/sparse_set.h"
#include "storage/entity_index.h"
#include "storage/archetype_graph.h"

#include "query/query.h"
#include "query/iter.h"
#include "command/command_buffer.h"
#include "events/observer.h"

#include "world/world.h"
#include "world/commit.h"
#include "world/defer.h"
#include "world/lifecycle.h"
#include "world/resource.h"
#include "world/relationship.h"
#include "world/require.h"
#include "world/inspect.h"
#include "world/ticks.h"

#endif
