/* fuzz-tracedata.c - libFuzzer target for the HEADER_TRACING_DATA parser
 * (pd_trace_parse) and the field printing it enables.  Input: byte n, n bytes
 * of tracepoint payload (printed as every event defined), the tracing data. */
#include "tests/fuzz/fuzz.h"
#include "format/format-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	if (len < 1 || (size_t)data[0] + 1 > len)
		return 0;
	size_t raw_len = data[0];
	/* A copy of its own, so a read past the payload is caught. */
	uint8_t *raw = malloc(raw_len ? raw_len : 1);
	memcpy(raw, data + 1, raw_len);
	struct pd_trace *t = pd_trace_parse(data + 1 + raw_len, len - 1 - raw_len);
	if (t) {
		struct strbuf sb = {0};
		/* The ids a recording carries are small; walking a range keeps
		 * this independent of libtraceevent's internals. */
		for (u64 id = 0; id < 2048; id++) {
			const char *name = pd_trace_name(t, id);
			if (!name)
				continue;
			fuzz_touch_str(name);
			sb_reset(&sb);
			pd_trace_format(t, id, raw, raw_len, &sb);
			u64 v;
			pd_trace_field(t, id, raw, raw_len, "common_pid", &v);
		}
		sb_free(&sb);
		pd_trace_free(t);
	}
	free(raw);
	return 0;
}
