/* main() for a fuzz target without libFuzzer: runs the target once on each file named on
 * the command line, as libFuzzer does when given files. A target reports a bug by
 * aborting (or through a sanitizer), so exit status 0 means every file loaded or failed
 * cleanly. tests/run replays tests/fuzz/regressions/ with it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

int main(int argc, char **argv)
{
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			perror(argv[i]);
			return 2;
		}
		size_t cap = 1 << 16, n = 0, got;
		uint8_t *buf = malloc(cap);
		while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
			n += got;
			if (n == cap)
				buf = realloc(buf, cap *= 2);
		}
		fclose(f);
		if (!buf) {
			fprintf(stderr, "%s: out of memory\n", argv[i]);
			return 2;
		}
		/* An exact-size copy, so ASan sees a read past the input's end as one. */
		uint8_t *exact = malloc(n ? n : 1);
		memcpy(exact, buf, n);
		free(buf);
		LLVMFuzzerTestOneInput(exact, n);
		free(exact);
	}
	return 0;
}
