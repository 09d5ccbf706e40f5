// make bench's reference reader: simdjson's On-Demand API (the structural index of issue 29:
// every quote, bracket and colon of a 64-byte block found with a few vector instructions, then
// key to key) reading, from every event of the traces given, the members hmem reads: ph, cat,
// name, pid, tid, ts, dur, and the integers of a [memory] event's args. It builds nothing and
// analyses nothing: a floor for the parse, not a second hmem.
//
// The files are loaded first and parsed once untimed (the page cache and the parser's buffers
// warm), then parsed again, timed in CPU seconds (getrusage). Prints one line:
//   CPU-seconds events memory-events bytes
// where events counts the elements of each file's traceEvents and memory-events those named
// "[memory]": make bench checks them against hmem's own counts.
#include <simdjson.h>
#include <sys/resource.h>

#include <cstdio>
#include <vector>

using namespace simdjson;

static double cpu_seconds()
{
	rusage u;
	getrusage(RUSAGE_SELF, &u);
	return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

static volatile uint64_t sink; // every value read ends here, so none is optimised away

struct counts {
	uint64_t events = 0, memory = 0, sum = 0;
};

static void read_events(ondemand::parser &parser, const padded_string &json, counts &c)
{
	ondemand::document doc = parser.iterate(json);
	for (auto top : doc.get_object()) {
		if (top.unescaped_key().value() != "traceEvents")
			continue;
		for (ondemand::object ev : top.value().get_array()) {
			c.events++;
			bool mem = false;
			for (auto m : ev) {
				std::string_view k = m.unescaped_key();
				ondemand::value v = m.value();
				if (k == "ph" || k == "cat") {
					c.sum += std::string_view(v.get_string()).size();
				} else if (k == "name") {
					std::string_view name = v.get_string();
					c.sum += name.size();
					mem = name == "[memory]";
				} else if (k == "pid" || k == "tid") {
					c.sum += v.raw_json_token().size();
				} else if (k == "ts" || k == "dur") {
					c.sum += (uint64_t)double(v.get_double());
				} else if (k == "args" && mem) {
					c.memory++;
					for (auto a : v.get_object()) {
						int64_t x;
						c.sum += a.unescaped_key().value().size();
						if (!a.value().get_int64().get(x))
							c.sum += (uint64_t)x;
					}
				}
			}
		}
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: simdjson-ref TRACE.json...\n");
		return 2;
	}
	std::vector<padded_string> files;
	size_t bytes = 0, largest = 0;
	counts warm, c;
	double s;
	int i = 1;
	try {
		for (; i < argc; i++) {
			files.push_back(padded_string::load(argv[i]));
			bytes += files.back().size();
			largest = std::max(largest, files.back().size());
		}
		ondemand::parser parser(largest + 64);
		for (i = 1; i < argc; i++)
			read_events(parser, files[i - 1], warm);
		double t0 = cpu_seconds();
		for (auto &f : files)
			read_events(parser, f, c);
		s = cpu_seconds() - t0;
	} catch (const simdjson_error &e) {
		fprintf(stderr, "simdjson-ref: %s: %s\n", argv[i < argc ? i : argc - 1], e.what());
		return 1;
	}
	printf("%.4f %llu %llu %zu\n", s, (unsigned long long)c.events, (unsigned long long)c.memory, bytes);
	sink = c.sum;
	return 0;
}
