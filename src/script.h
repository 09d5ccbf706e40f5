/* script: the only module that knows Lua. Loads a rule file, calls its classify(row)
 * once per allocation, and serves the row fields. */
#ifndef HM_SCRIPT_H
#define HM_SCRIPT_H

#include "analyze.h"

typedef struct hm_script hm_script;

/* Load the rule file at path into a new Lua state and resolve its hooks.
 * NULL on failure with the message in err (a Lua error reads "path:line: message"). */
hm_script *hm_script_open(const char *path, char *err, size_t errsz);

/* Set s->cat for every event of every series of f: allocations and unpaired frees are
 * classified by the rule file; a matched free inherits its allocation's category.
 * cats holds the global category names (id 0 is "(before trace)"); new names are added.
 * Returns 0, or -1 with the error, the event and a traceback in err. f must stay alive
 * as long as the script (rows may be kept by the rule file). */
int hm_script_classify(hm_script *s, hm_file *f, hm_strtab *cats, char *err, size_t errsz);

/* Number of classify calls made so far. */
uint64_t hm_script_calls(const hm_script *s);

void hm_script_close(hm_script *s);

/* Modules compiled into the binary from lua/ (see scripts/embed-lua.lua). */
typedef struct hm_embedded {
	const char *name, *source;
} hm_embedded;
extern const hm_embedded hm_embedded_modules[];

#endif
