/* embedded: the Lua modules compiled into the binary from lua/ (build/embedded.c, made by
 * scripts/embed-lua.lua): static data, no Lua calls. */
#ifndef HM_EMBEDDED_H
#define HM_EMBEDDED_H

typedef struct hm_embedded {
	const char *name, *path, *source;
} hm_embedded;

/* Ends with an entry whose name is NULL. */
extern const hm_embedded hm_embedded_modules[];

#endif
