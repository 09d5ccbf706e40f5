/* lcjson: require "cjson" in a rule file, lua-cjson's C library linked into hmem. A Lua
 * binding file: calls lctx (what --lua-mem still allows), nothing above it (lbind.h). */
#ifndef HM_LCJSON_H
#define HM_LCJSON_H

#include <lua.h>

/* A fresh instance of lua-cjson's C library (cjson.safe if safe) for one chunk, its
 * nesting depths capped. [-0, +1, e] */
void hm_lua_push_cjson(lua_State *L, int safe);

#endif
