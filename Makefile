# hmem: `make demo` and `make test` are all a user needs (both install what is missing).
# The version is written once, in lua/hmem/init.lua, so that plain Lua has it too (issue 26).
VERSION  := $(shell sed -n 's/^hmem\.version = "\([^"]*\)"$$/\1/p' lua/hmem/init.lua)
CC       ?= cc
LUA_PC   := lua5.4
WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wpointer-arith \
            -Wformat=2 -Wundef -Wno-format-nonliteral
CFLAGS   ?= -O2 -g
SAN      ?=
# With undefined, also float-cast-overflow (not part of it in GCC): a double too big for
# its integer type, such as a limit given as "inf" (issue 11).
SANFLAGS := $(if $(SAN),-fsanitize=$(SAN) -fno-omit-frame-pointer,)$(if $(findstring undefined,$(SAN)), -fsanitize=float-cast-overflow,)
CPPFLAGS += -DHM_VERSION='"$(VERSION)"' -Isrc $(shell pkg-config --cflags $(LUA_PC) 2>/dev/null)
# ISA-L inflates gzip ~5x faster than zlib here (README "Performance"); zlib where it is absent
# (make ISAL=0 forces zlib).
ISAL     ?= $(shell [ -f /usr/include/isa-l/igzip_lib.h ] && echo 1 || echo 0)
ifeq ($(ISAL),1)
CPPFLAGS += -DHAVE_ISAL
LDLIBS   += -lisal
endif
LDLIBS   += $(shell pkg-config --libs $(LUA_PC) 2>/dev/null) -lz -lm -lpthread -lsqlite3
# require "cjson" in a rule file is lua-cjson's library linked in, never a file found on a
# search path (README "Rule files from other teams are contained").
CJSON_LIB := -l:liblua5.4-cjson.so.0
PREFIX   ?= /usr/local

CORE     := src/util.c src/input.c src/jscan.c src/pipe.c src/jstream.c src/pack.c src/store.c src/kevent.c src/klayout.c src/kineto.c src/kmeta.c src/unpickle.c src/snapshot.c src/snaphost.c src/snapseg.c src/trace.c src/analyze.c src/timeline.c src/fields.c src/explain.c src/window.c src/jsonw.c src/explainout.c src/snapout.c src/output.c src/outfile.c src/loader.c src/perfetto.c src/html.c src/budget.c src/diffside.c src/allocations.c src/plan.c src/partial.c src/ranks.c src/ranksout.c src/cells.c src/helper.c
LUA_MODS := $(shell find lua -name '*.lua' | sort)
# The Lua side: the only objects that know Lua (the fuzz replay of the Lua API links them too).
LUA_SIDE := watchdog.o lctx.o lbounds.o lrow.o lview.o lexplain.o lranks.o lreport.o lclassify.o lcjson.o lsandbox.o script.o ldiff.o embedded.o
OBJ      := $(CORE:src/%.c=build/%.o) build/html_assets.o $(LUA_SIDE:%=build/%) build/args.o build/merge.o build/run.o build/diff.o build/main.o

.PHONY: all deps demo test bench fuzz clean install uninstall
all: hmem build/hmem.bash

# Debian packages a fresh machine lacks; skipped when everything is present.
# groff-base: tests/man.lua and tests/install.sh read the man page; python3-jsonschema: tests/schema.py
# checks --json against schema/hmem.schema.json.
DEPS := liblua5.4-dev lua5.4 lua-cjson lua-busted zlib1g-dev libisal-dev pkg-config time groff-base python3-jsonschema libsqlite3-dev sqlite3
deps:
	@missing=$$(for p in $(DEPS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

# The flags the objects are built with, kept in build/flags: when they change (ISA-L installed
# by `make deps` after a first build without it, SAN=..., CFLAGS=...), every object is built
# again, never linked with objects of other flags.
FLAGS_NOW := $(CC) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) $(WARN) $(LDFLAGS) $(LDLIBS)
ifneq ($(file < build/flags),$(FLAGS_NOW))
$(shell mkdir -p build)
$(file > build/flags,$(FLAGS_NOW))
endif

hmem: $(OBJ)
	$(CC) $(CFLAGS) $(SANFLAGS) $(LDFLAGS) -o $@ $(OBJ) $(LDLIBS) $(CJSON_LIB)

build/%.o: src/%.c src/*.h build/flags | build
	$(CC) $(CPPFLAGS) $(CFLAGS) $(VECTOR) $(SANFLAGS) $(WARN) -c -o $@ $<

# pack.c's loops over a block of rows in vector instructions (-O2 leaves most loops scalar):
# 3.2% of the memory shape's instructions (README "Performance", issue 29's sixth step).
build/pack.o: VECTOR := -ftree-vectorize

build/embedded.c: $(LUA_MODS) scripts/embed-lua.lua | build
	lua5.4 scripts/embed-lua.lua $(LUA_MODS) > $@.tmp && mv $@.tmp $@

build/embedded.o: build/embedded.c src/script.h src/embedded.h build/flags
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) -c -o $@ $<

# The HTML report's script and style, written as files and carried in the binary.
build/html_assets.c: src/report.js src/report.css scripts/embed-text.lua | build
	lua5.4 scripts/embed-text.lua hm_html_script=src/report.js hm_html_style=src/report.css > $@.tmp && mv $@.tmp $@

build/html_assets.o: build/html_assets.c build/flags
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) -c -o $@ $<

build:
	mkdir -p build

# Bash completion: the commands and options of the built hmem's --help and the shipped packs,
# written into the script as static lists, so that TAB runs neither hmem nor a pack.
PACKS := $(basename $(notdir $(wildcard lua/hmem/rules/*.lua)))
build/hmem.bash: hmem completion/hmem.bash.in completion/gen.lua $(wildcard lua/hmem/rules/*.lua) | build
	./hmem --help | lua5.4 completion/gen.lua completion/hmem.bash.in $(PACKS) > $@.tmp && mv $@.tmp $@

build/unit: tests/unit.c $(CORE:src/%.c=build/%.o) build/html_assets.o
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) $(WARN) -o $@ $^ $(LDLIBS)

demo: deps
	$(MAKE) hmem
	./hmem run examples/size_buckets.lua examples/traces/

test: deps
	$(MAKE) hmem build/hmem.bash build/unit build/replay-reader build/replay-pipeline build/replay-lua-api build/replay-unpickle build/replay-partial build/gen-trace build/gen-snapshot
	tests/run

# The fuzz targets (tests/fuzz/) without libFuzzer: a main() that runs each file given, for
# tests/run to replay tests/fuzz/regressions/ in every build (sanitizers on with SAN=...).
REPLAY_CORE := $(filter-out build/loader.o,$(CORE:src/%.c=build/%.o)) build/html_assets.o
build/replay-reader: tests/fuzz/fuzz_reader.c tests/fuzz/replay.c $(REPLAY_CORE)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) $(WARN) -o $@ $^ $(LDLIBS)

build/replay-pipeline: tests/fuzz/fuzz_pipeline.c tests/fuzz/replay.c $(REPLAY_CORE)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) $(WARN) -Wl,--wrap=hm_src_read -o $@ $^ $(LDLIBS)

build/replay-unpickle: tests/fuzz/fuzz_unpickle.c tests/fuzz/replay.c $(REPLAY_CORE)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) $(WARN) -o $@ $^ $(LDLIBS)

build/replay-partial: tests/fuzz/fuzz_partial.c tests/fuzz/replay.c $(REPLAY_CORE)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) $(WARN) -o $@ $^ $(LDLIBS)

# The Lua API target (issue 12) runs rule files: it links the Lua side too.
build/replay-lua-api: tests/fuzz/fuzz_lua_api.c tests/fuzz/replay.c $(REPLAY_CORE) $(LUA_SIDE:%=build/%)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) $(WARN) -o $@ $^ $(LDLIBS) $(CJSON_LIB)

# libFuzzer (clang): `make fuzz` builds the targets under ASan + UBSan and runs each for
# FUZZ_SECONDS (tests/fuzz/README.md). Not part of `make test`. The corpora grow in
# build/fuzz/corpus-*; crashes land in build/fuzz/artifacts/. ISAL=0 builds the zlib reader.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_DIR     := build/fuzz/$(if $(filter 1,$(ISAL)),isal,zlib)
FUZZ_CORE    := $(REPLAY_CORE:build/%.o=$(FUZZ_DIR)/%.o)

$(FUZZ_DIR)/%.o: src/%.c src/*.h
	@mkdir -p $(FUZZ_DIR)
	$(FUZZ_CC) $(CPPFLAGS) -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer-no-link $(WARN) -c -o $@ $<

$(FUZZ_DIR)/html_assets.o: build/html_assets.c
	@mkdir -p $(FUZZ_DIR)
	$(FUZZ_CC) $(CPPFLAGS) -g -O1 -c -o $@ $<

$(FUZZ_DIR)/fuzz_reader: tests/fuzz/fuzz_reader.c $(FUZZ_CORE)
	$(FUZZ_CC) $(CPPFLAGS) -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer $(WARN) -o $@ $^ $(LDLIBS)

$(FUZZ_DIR)/fuzz_pipeline: tests/fuzz/fuzz_pipeline.c $(FUZZ_CORE)
	$(FUZZ_CC) $(CPPFLAGS) -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer $(WARN) -Wl,--wrap=hm_src_read -o $@ $^ $(LDLIBS)

$(FUZZ_DIR)/fuzz_unpickle: tests/fuzz/fuzz_unpickle.c $(FUZZ_CORE)
	$(FUZZ_CC) $(CPPFLAGS) -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer $(WARN) -o $@ $^ $(LDLIBS)

$(FUZZ_DIR)/fuzz_partial: tests/fuzz/fuzz_partial.c $(FUZZ_CORE)
	$(FUZZ_CC) $(CPPFLAGS) -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer $(WARN) -o $@ $^ $(LDLIBS)

$(FUZZ_DIR)/embedded.o: build/embedded.c
	@mkdir -p $(FUZZ_DIR)
	$(FUZZ_CC) $(CPPFLAGS) -g -O1 -c -o $@ $<

$(FUZZ_DIR)/fuzz_lua_api: tests/fuzz/fuzz_lua_api.c $(FUZZ_CORE) $(LUA_SIDE:%=$(FUZZ_DIR)/%)
	$(FUZZ_CC) $(CPPFLAGS) -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer $(WARN) -o $@ $^ $(LDLIBS) $(CJSON_LIB)

build/fuzz/seeds/.done: tests/fuzz/make-seeds.lua
	rm -rf build/fuzz/seeds
	lua5.4 tests/fuzz/make-seeds.lua build/fuzz/seeds
	touch $@

fuzz: deps
	@command -v $(FUZZ_CC) >/dev/null || { echo "make fuzz needs clang (apt-get install clang)"; exit 1; }
	$(MAKE) $(FUZZ_DIR)/fuzz_reader $(FUZZ_DIR)/fuzz_pipeline build/fuzz/seeds/.done
	@mkdir -p build/fuzz/corpus-reader build/fuzz/corpus-pipeline build/fuzz/artifacts
	for t in reader pipeline; do \
	  echo "fuzz_$$t: $(FUZZ_SECONDS) s"; \
	  $(FUZZ_DIR)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) \
	    -dict=tests/fuzz/json.dict -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
	    -artifact_prefix=build/fuzz/artifacts/$$t- -print_final_stats=1 \
	    build/fuzz/corpus-$$t build/fuzz/seeds tests/fuzz/regressions || exit 1; \
	done
	@mkdir -p build/fuzz/corpus-unpickle build/fuzz/seeds-unpickle
	cp tests/fuzz/regressions/snap-* build/fuzz/seeds-unpickle/
	echo "fuzz_unpickle: $(FUZZ_SECONDS) s"
	$(MAKE) $(FUZZ_DIR)/fuzz_unpickle
	$(FUZZ_DIR)/fuzz_unpickle -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
	  -artifact_prefix=build/fuzz/artifacts/unpickle- -print_final_stats=1 \
	  build/fuzz/corpus-unpickle build/fuzz/seeds-unpickle
	@mkdir -p build/fuzz/corpus-partial
	echo "fuzz_partial: $(FUZZ_SECONDS) s"
	$(MAKE) hmem $(FUZZ_DIR)/fuzz_partial
	tests/fuzz/make-partial-seeds.sh build/fuzz/seeds-partial
	$(FUZZ_DIR)/fuzz_partial -max_total_time=$(FUZZ_SECONDS) -max_len=262144 -timeout=20 -rss_limit_mb=2048 \
	  -artifact_prefix=build/fuzz/artifacts/partial- -print_final_stats=1 \
	  build/fuzz/corpus-partial build/fuzz/seeds-partial tests/fuzz/regressions-partial
	@mkdir -p build/fuzz/corpus-lua-api
	echo "fuzz_lua_api: $(FUZZ_SECONDS) s"
	$(MAKE) $(FUZZ_DIR)/fuzz_lua_api
	$(FUZZ_DIR)/fuzz_lua_api -max_total_time=$(FUZZ_SECONDS) -max_len=256 -timeout=20 -rss_limit_mb=2048 \
	  -artifact_prefix=build/fuzz/artifacts/lua-api- -print_final_stats=1 \
	  build/fuzz/corpus-lua-api tests/fuzz/regressions-lua

# The benchmark needs more than the tests: igzip, GNU time, bc, simdjson and a C++ compiler for
# its reference parser (pandas for BENCH_PANDAS=1).
BENCH_DEPS := isal time bc gzip valgrind g++ libsimdjson-dev $(if $(filter 1,$(BENCH_PANDAS)),python3-pandas)
bench: deps
	@missing=$$(for p in $(BENCH_DEPS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
	$(MAKE) hmem build/gen-trace build/gen-snapshot build/simdjson-ref
	scripts/bench/run
	scripts/bench/merge
	scripts/bench/html
	scripts/bench/snapshot

# make bench's reference parser (scripts/bench/simdjson_ref.cpp); never part of hmem.
build/simdjson-ref: scripts/bench/simdjson_ref.cpp | build
	$(CXX) -O2 -DNDEBUG -std=c++17 -Wall -Wextra -o $@ $< -lsimdjson

build/gen-trace: scripts/gen-trace.c | build
	$(CC) $(CFLAGS) $(WARN) -o $@ $<

build/gen-snapshot: scripts/gen-snapshot.c | build
	$(CC) $(CFLAGS) $(WARN) -o $@ $<

# make install PREFIX=...: the binary; the Lua side (hmem, hmem.testing, the shipped packs
# hmem.rules.*) as Lua 5.4 modules, where lua5.4 and busted look (PREFIX/share/lua/5.4, on
# their default path for /usr/local and /usr); the man page hmem(1); bash completion; the
# examples (rule files, a pack with its spec, two traces) where hmem(1) says they are.
LUADIR   := $(PREFIX)/share/lua/5.4
MANDIR   := $(PREFIX)/share/man/man1
BASHDIR  := $(PREFIX)/share/bash-completion/completions
EXDIR    := $(PREFIX)/share/doc/hmem/examples
EXAMPLES := $(filter-out examples/report.png,$(shell find examples -type f | sort))
INSTALLED := $(DESTDIR)$(PREFIX)/bin/hmem $(LUA_MODS:lua/%=$(DESTDIR)$(LUADIR)/%) \
             $(DESTDIR)$(MANDIR)/hmem.1 $(DESTDIR)$(BASHDIR)/hmem $(EXAMPLES:examples/%=$(DESTDIR)$(EXDIR)/%)
install: hmem build/hmem.bash
	install -D -m 755 hmem $(DESTDIR)$(PREFIX)/bin/hmem
	for f in $(LUA_MODS:lua/%=%); do install -D -m 644 lua/$$f $(DESTDIR)$(LUADIR)/$$f || exit 1; done
	install -D -m 644 man/hmem.1 $(DESTDIR)$(MANDIR)/hmem.1
	install -D -m 644 build/hmem.bash $(DESTDIR)$(BASHDIR)/hmem
	for f in $(EXAMPLES:examples/%=%); do install -D -m 644 examples/$$f $(DESTDIR)$(EXDIR)/$$f || exit 1; done

# Removes what install put there, and the Lua directories it made when they are left empty.
uninstall:
	rm -f $(INSTALLED)
	-rmdir $(DESTDIR)$(LUADIR)/hmem/rules $(DESTDIR)$(LUADIR)/hmem/testing $(DESTDIR)$(LUADIR)/hmem 2>/dev/null
	-rmdir $(sort $(dir $(EXAMPLES:examples/%=$(DESTDIR)$(EXDIR)/%))) $(DESTDIR)$(EXDIR) $(DESTDIR)$(PREFIX)/share/doc/hmem 2>/dev/null

# The benchmark's generated traces (build/bench) survive: they take minutes to make.
clean:
	rm -rf hmem $(filter-out build/bench,$(wildcard build/*))
