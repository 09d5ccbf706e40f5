# hmem: `make demo` and `make test` are all a user needs (both install what is missing).
VERSION  := 0.1.0
CC       ?= cc
LUA_PC   := lua5.4
WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wpointer-arith \
            -Wformat=2 -Wundef -Wno-format-nonliteral
CFLAGS   ?= -O2 -g
SAN      ?=
SANFLAGS := $(if $(SAN),-fsanitize=$(SAN) -fno-omit-frame-pointer,)
CPPFLAGS += -DHM_VERSION='"$(VERSION)"' -Isrc $(shell pkg-config --cflags $(LUA_PC) 2>/dev/null)
# ISA-L inflates gzip ~5x faster than zlib here (README "Performance"); zlib where it is absent
# (make ISAL=0 forces zlib).
ISAL     ?= $(shell [ -f /usr/include/isa-l/igzip_lib.h ] && echo 1 || echo 0)
ifeq ($(ISAL),1)
CPPFLAGS += -DHAVE_ISAL
LDLIBS   += -lisal
endif
LDLIBS   += $(shell pkg-config --libs $(LUA_PC) 2>/dev/null) -lz -lm -lpthread
PREFIX   ?= /usr/local

CORE     := src/util.c src/input.c src/trace.c src/analyze.c src/timeline.c src/fields.c src/output.c src/loader.c src/perfetto.c src/html.c
LUA_MODS := $(shell find lua -name '*.lua' | sort)
OBJ      := $(CORE:src/%.c=build/%.o) build/html_assets.o build/script.o build/lrow.o build/lreport.o build/embedded.o build/main.o

.PHONY: all deps demo test bench clean install
all: hmem

# Debian packages a fresh machine lacks; skipped when everything is present.
DEPS := liblua5.4-dev lua5.4 lua-cjson lua-busted zlib1g-dev libisal-dev pkg-config
deps:
	@missing=$$(for p in $(DEPS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

hmem: $(OBJ)
	$(CC) $(CFLAGS) $(SANFLAGS) $(LDFLAGS) -o $@ $(OBJ) $(LDLIBS)

build/%.o: src/%.c src/*.h | build
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) $(WARN) -c -o $@ $<

build/embedded.c: $(LUA_MODS) scripts/embed-lua.lua | build
	lua5.4 scripts/embed-lua.lua $(LUA_MODS) > $@.tmp && mv $@.tmp $@

build/embedded.o: build/embedded.c src/script.h
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) -c -o $@ $<

# The HTML report's script and style, written as files and carried in the binary.
build/html_assets.c: src/report.js src/report.css scripts/embed-text.lua | build
	lua5.4 scripts/embed-text.lua hm_html_script=src/report.js hm_html_style=src/report.css > $@.tmp && mv $@.tmp $@

build/html_assets.o: build/html_assets.c
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) -c -o $@ $<

build:
	mkdir -p build

build/unit: tests/unit.c $(CORE:src/%.c=build/%.o) build/html_assets.o
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) $(WARN) -o $@ $^ $(LDLIBS)

demo: deps
	$(MAKE) hmem
	./hmem run examples/size_buckets.lua examples/traces/

test: deps
	$(MAKE) hmem build/unit
	tests/run

# The benchmark needs more than the tests: igzip, pandas, GNU time, bc.
BENCH_DEPS := isal python3-pandas time bc gzip
bench: deps
	@missing=$$(for p in $(BENCH_DEPS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
	$(MAKE) hmem build/gen-trace
	scripts/bench/run

build/gen-trace: scripts/gen-trace.c | build
	$(CC) $(CFLAGS) $(WARN) -o $@ $<

install: hmem
	install -D -m 755 hmem $(DESTDIR)$(PREFIX)/bin/hmem

# The benchmark's generated traces (build/bench) survive: they take minutes to make.
clean:
	rm -rf hmem $(filter-out build/bench,$(wildcard build/*))
