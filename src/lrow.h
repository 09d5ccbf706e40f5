/* lrow: the row userdata ("hmem.row"), the position of one memory event whose fields are
 * computed when read (fields.c). A Lua binding file: calls lctx (the state's rows) and
 * the plain-C fields, nothing above it (lbind.h). Rows point into the hm_file and
 * hm_series they were made for: the caller keeps those alive as long as the state. */
#ifndef HM_LROW_H
#define HM_LROW_H

#include "lctx.h"

/* Register the row metatable and the state's rows. [-0, +0, m] */
void hm_lua_row_register(lua_State *L);

/* Push the row for position k of series s: the one already made for it if Lua still holds
 * it. cats (NULL inside classify) names categories for row.category from then on, for
 * every row; it must outlive the state. [-0, +1, m] */
void hm_lua_row_push(lua_State *L, const hm_file *f, const hm_series *s, uint32_t k, const hm_strtab *cats);

/* For classify, which pushes each event at most once, so it needs no look-up: push the
 * row metatable, then, if keep, the table of rows made for f. Without keep no later phase
 * may push rows again (so nothing could meet a row twice). [-0, +1|2, m] */
void hm_lua_rows_begin(lua_State *L, const hm_file *f, int keep);

/* Push a new row for an event of f not pushed before, given the metatable at mt and the
 * table of rows made at made (0: not kept). [-0, +1, m] */
void hm_lua_row_new(lua_State *L, const hm_file *f, const hm_series *s, uint32_t k, int mt, int made);

/* Push a scalar field value (lists are not scalars: pushes nil). [-0, +1, m] */
void hm_lua_push_value(lua_State *L, const hm_value *v);

#endif
