/* unpickle: a Python pickle (protocols 2 to 5) read as data only, into a compact value tree.
 * Only the 33 opcodes that build dicts, lists, tuples, strings, numbers, None and booleans
 * and that use the memo are accepted; any other opcode (GLOBAL, REDUCE, BUILD, bytes, sets,
 * persistent ids, ...) is refused where it stands, before anything is done with it, so a
 * pickle is never more than data here: nothing is imported, called or executed. Every
 * length, memo index, mark and nesting depth is bounded, strings must be UTF-8 (lone
 * surrogates allowed, as Python's pickle writes them), and a cycle built through the memo
 * is refused. Plain C, no Lua.
 *
 * Values are 64-bit handles (hm_pkv): scalars are held in the handle or in side tables,
 * the memo costs what it holds (a far memo index goes into a hash, not a huge array),
 * dicts of many keys are hashed for look-ups, strings are interned once (a key or a file name repeated a million times is one string),
 * containers are arrays of handles in an arena of exact sizes, and the arrays that repeat
 * (a dict's keys, a frames list's frames) are kept once. A shared object (a frame dict referenced from many
 * stacks through the memo) is one node reached from many places. A reader may take dicts as
 * their pairs are set (hm_pk_hook: a snapshot's trace entries become records of a few bytes),
 * so that the tree never holds millions of them.
 *
 * Ownership: hm_pk_load returns a tree the caller owns and frees with hm_pk_free; strings
 * and containers read from it stay valid until then. */
#ifndef HM_UNPICKLE_H
#define HM_UNPICKLE_H

#include "input.h"

#include <stddef.h>
#include <stdint.h>

typedef uint64_t hm_pkv;
typedef struct hm_pk hm_pk;

enum hm_pk_type {
	HM_PK_NONE, HM_PK_BOOL, HM_PK_INT, HM_PK_BIGINT, HM_PK_FLOAT, HM_PK_STR,
	HM_PK_LIST, HM_PK_TUPLE, HM_PK_DICT,
	HM_PK_RECORD, /* a dict a hook kept as bytes of its own (hm_pk_hook, hm_pk_record) */
	HM_PK_TOKEN   /* a list a hook read into a number of its own (hm_pk_reduce, hm_pk_token) */
};

/* Bounds (README "Snapshots"): a string of at most 1 GiB; at most 64 nested containers
 * from the top; at most 1000 open marks; memo indices below 2^28 and below the byte offset
 * of the opcode that sets them (each entry costs at least a byte of input). */
#define HM_PK_MAX_STR (UINT64_C(1) << 30)
#define HM_PK_MAX_DEPTH 64
#define HM_PK_MAX_MARKS 1000
#define HM_PK_MAX_MEMO (UINT64_C(1) << 28)

/* Read a whole pickle from src, or from text[0, len) when src is NULL, up to its STOP;
 * anything after the STOP is an error. keep (NULL-terminated, or NULL for all) names the
 * dict keys whose values the caller may read as strings: a string longer than 64 bytes
 * anywhere else is checked and dropped (hm_pk_str gives NULL for it), so strings the caller
 * never reads cost no memory. The tree may take at most 256 bytes per byte of input read
 * (of the file, compressed) plus 256 MiB: a compression bomb stops where it passes that.
 * On failure returns NULL with "name:offset: what" in err (offset = the byte offset of the
 * opcode at fault in the decoded stream). */
hm_pk *hm_pk_load(const char *name, hm_src *src, const char *text, size_t len, const char *const *keep, char *err,
		  size_t errsz);
void hm_pk_free(hm_pk *p);

/* A reader that turns what it reads into a few bytes as the pickle is read, so that the
 * tree never holds it whole (a snapshot's trace entries: millions of dicts). dict is called
 * when a dict gets its first pairs (kv: key, value, ... n pairs; off: the byte offset of
 * the opcode that made the dict), fewer than 1000 (Python's pickle sets them all at once,
 * so no pair comes later), if nothing but the place it was made reaches it (it is
 * memoized at most once and was never fetched with BINGET). A later SETITEM(S) into a dict
 * kept as a record is an error. It returns 1 to keep the dict
 * as a record instead (*rec, *len: bytes it owns until its next call, at most 16,000),
 * which takes the dict's place on the stack and in the memo (its handle is HM_PK_RECORD:
 * hm_pk_record gives the bytes), 2 to keep it as a record that stands alone (see
 * hm_pk_record_anchor); 0 to keep the dict; -1 on error (set by hm_pk_charge).
 * While it runs it may read kv's values with the functions below, and take a list it
 * read with hm_pk_reduce. */
typedef struct hm_pk_hook {
	void *ctx;
	int (*dict)(void *ctx, hm_pk *p, uint64_t off, const hm_pkv *kv, size_t n, const void **rec, size_t *len);
} hm_pk_hook;

/* hm_pk_load with a hook (NULL: none). */
hm_pk *hm_pk_load_with(const char *name, hm_src *src, const char *text, size_t len, const char *const *keep,
		       const hm_pk_hook *hook, char *err, size_t errsz);

/* In a hook: list (a value of the dict being kept) was read as token. The list may never
 * change after (an opcode that would change it is an error). When nothing but the dict
 * and the memo reaches it, it is taken: its slot of the memo holds the token instead (a
 * later BINGET gives it, HM_PK_TOKEN), its node is used again, and the token is returned;
 * else the list. fresh: the hook had not seen these elements before (the tree's checks,
 * cycles and depth, then cover them at the end as if the list were still in the tree). */
hm_pkv hm_pk_reduce(hm_pk *p, hm_pkv list, uint64_t token, int fresh);
/* In a hook: bytes the hook keeps, counted in the tree's bound (see hm_pk_load); -1 (the
 * error set) when they pass it. */
int hm_pk_charge(hm_pk *p, uint64_t off, uint64_t bytes);
/* A record's bytes and length (3 to 16,000); NULL when v is not a record. */
const unsigned char *hm_pk_record(const hm_pk *p, hm_pkv v, size_t *len);
/* Records are kept in the order the hook made them, and a hook may make each one from the
 * one before it (deltas), but for those made standing alone (dict returned 2): a record
 * made from those before it is read by going on from the last record that stands alone at
 * or before it (hm_pk_record_anchor; the first record made, when none does), record after
 * record (hm_pk_record_next: HM_PK_ABSENT after the last). */
hm_pkv hm_pk_record_anchor(const hm_pk *p, hm_pkv v);
hm_pkv hm_pk_record_next(const hm_pk *p, hm_pkv v);
/* A token's number; UINT64_MAX when v is not a token. */
uint64_t hm_pk_token(hm_pkv v);
/* The token of a number (as hm_pk_reduce makes it). */
hm_pkv hm_pk_token_of(uint64_t token);
/* Above the position of every record (a record's position: its handle's low 60 bits; two
 * records are at least 4 apart), for a caller's marks per record. */
uint64_t hm_pk_record_end(const hm_pk *p);

/* The value STOP returned. */
hm_pkv hm_pk_root(const hm_pk *p);
enum hm_pk_type hm_pk_type(hm_pkv v);

/* An integer (HM_PK_INT or HM_PK_BIGINT; booleans too, as 0 and 1) into *out: returns 0,
 * 1 when the value is above INT64_MAX (LONG1 of 2^64-1, which real snapshots hold: *out is
 * it minus 2^64), -1 when v is not an integer. */
int hm_pk_int(const hm_pk *p, hm_pkv v, int64_t *out);
/* A float (or an integer, converted) into *out; -1 when v is neither. */
int hm_pk_num(const hm_pk *p, hm_pkv v, double *out);
/* A string's bytes (valid UTF-8, NUL-terminated) and length; NULL when v is not a string
 * or is a long string hm_pk_load dropped. */
const char *hm_pk_str(const hm_pk *p, hm_pkv v, size_t *len);

/* Elements of a list or tuple, pairs of a dict; 0 for anything else. */
size_t hm_pk_len(const hm_pk *p, hm_pkv v);
/* Element i of a list or tuple (i < hm_pk_len). */
hm_pkv hm_pk_item(const hm_pk *p, hm_pkv v, size_t i);
/* Key and value of pair i of a dict (i < hm_pk_len). */
hm_pkv hm_pk_key(const hm_pk *p, hm_pkv v, size_t i);
hm_pkv hm_pk_value(const hm_pk *p, hm_pkv v, size_t i);

/* A key name looked up once (hm_pk_atom), then found in dicts by a compare of ids: the
 * value of the last pair whose key is that string (as Python keeps the last), or
 * HM_PK_ABSENT. An atom of a string the pickle never holds finds nothing. */
#define HM_PK_ABSENT UINT64_MAX
uint32_t hm_pk_atom(const hm_pk *p, const char *key);
hm_pkv hm_pk_get(const hm_pk *p, hm_pkv dict, uint32_t atom);
/* The same from a string id of the pickle (the id of a string handle). */
uint32_t hm_pk_str_id(hm_pkv v);
/* The string of an id hm_pk_str_id gave. */
const char *hm_pk_str_of(const hm_pk *p, uint32_t id, size_t *len);

/* A container's index, below hm_pk_containers (UINT32_MAX for other values): a caller's
 * marks per container (which ones it has read) are indexed by it. */
uint32_t hm_pk_node(hm_pkv v);

/* A list's or tuple's elements as a key (v a list or tuple): two with the same key have the
 * same elements (a list hm_pk_reduce took keeps its key's meaning until hm_pk_free). The frames lists of a snapshot repeat (a code path's stack is pickled anew
 * each time it allocates) and hm_pk_load keeps each such array once, so a reader that works
 * out what a frames list means can do it once per key, not once per list. */
uint64_t hm_pk_same(const hm_pk *p, hm_pkv v);

/* The hash of the maps that a snapshot's keys (memo indices, dict keys, addresses) index:
 * a mixer of all 64 bits, seeded per process (by where the program is loaded), so keys
 * chosen to collide in one run do not collide in another. */
uint64_t hm_pk_hash(uint64_t key);

/* The byte offset of the opcode that made a container (0 for other values): where a
 * reader's message about it points. */
uint64_t hm_pk_at(const hm_pk *p, hm_pkv v);

/* The key comparisons and hash probes of every hm_pk_get so far (a count of work done,
 * for tests: it grows with the look-ups, not with the dicts' sizes). */
uint64_t hm_pk_work(const hm_pk *p);
/* Bytes of long strings dropped (see hm_pk_load). */
uint64_t hm_pk_dropped(const hm_pk *p);

/* Nodes kept: containers and interned strings (for -v and tests). */
size_t hm_pk_containers(const hm_pk *p);
size_t hm_pk_strings(const hm_pk *p);

#endif
