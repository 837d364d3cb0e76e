// SPDX-License-Identifier: GPL-2.0
/*
 * The context's report: the allocator's memory report with the streams'
 * statistics added, in the allocator's three formats, so one file tells
 * where the memory went and what the streams did with it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include <flex/context.h>
#include <flex/stream.h>

#include "log.h"
#include "stream_internal.h"

/* A stream's row, copied out under the context's lock. */
struct stream_row {
	uint32_t queue_id;
	int priority;
	int is_default;
	struct flex_stream_stats st;
};

static const char *prio_name(int prio)
{
	switch (prio) {
	case FLEX_STREAM_PRIO_LOW: return "low";
	case FLEX_STREAM_PRIO_NORMAL: return "normal";
	case FLEX_STREAM_PRIO_HIGH: return "high";
	}
	return "?";
}

/*
 * Snapshot every live stream and the retired totals. This is the only
 * place that holds both locks, the context's and then each stream's; a
 * stream is unlisted under the context's lock before it is freed, so none
 * can go away during the walk. Returns the row count, or -ENOMEM.
 */
static int snapshot(struct flex_context *ctx, struct stream_row **rows,
		    struct flex_stream_stats *retired, uint32_t *n_retired)
{
	struct flex_stream *s;
	struct stream_row *r;
	int n = 0, i = 0;

	pthread_mutex_lock(&ctx->lock);
	for (s = ctx->streams; s; s = s->ctx_next)
		n++;
	r = calloc(n ? n : 1, sizeof(*r));
	if (!r) {
		pthread_mutex_unlock(&ctx->lock);
		return -ENOMEM;
	}
	/* The list is newest first: report in creation order. */
	for (s = ctx->streams; s; s = s->ctx_next, i++) {
		struct stream_row *row = &r[n - 1 - i];

		row->queue_id = s->qid;
		row->priority = s->priority;
		row->is_default = s == ctx->default_stream;
		flex_stream_get_stats(s, &row->st);
	}
	*retired = ctx->retired;
	*n_retired = ctx->n_retired;
	pthread_mutex_unlock(&ctx->lock);
	*rows = r;
	return n;
}

static void text_line(FILE *f, const char *prefix, const char *who,
		      const struct flex_stream_stats *st)
{
	char dma[16], slot[16];

	fprintf(f, "%s  %s: jobs %llu, tiles %llu, CBs %llu in %llu submits (%llu parked), "
		"host ops %llu (host functions %llu), DMA %s, synchronize %llu calls %.3f ms "
		"waiting, correction arena %s (grown %llu times)\n", prefix, who,
		(unsigned long long)st->jobs, (unsigned long long)st->tiles,
		(unsigned long long)st->cbs, (unsigned long long)st->submits,
		(unsigned long long)st->parked_cbs, (unsigned long long)st->host_ops,
		(unsigned long long)st->host_funcs,
		flex_human_bytes(dma, sizeof(dma), st->bytes_dma),
		(unsigned long long)st->synchronizes, st->sync_ns / 1e6,
		flex_human_bytes(slot, sizeof(slot), st->corr_slot_bytes),
		(unsigned long long)st->corr_slot_grows);
}

static void write_text(FILE *f, const char *prefix, const struct stream_row *rows, int n,
		       const struct flex_stream_stats *retired, uint32_t n_retired)
{
	char who[64];
	int i;

	fprintf(f, "%sflex streams: %d live, %u destroyed\n", prefix, n, n_retired);
	for (i = 0; i < n; i++) {
		snprintf(who, sizeof(who), "stream queue %u (%s%s)", rows[i].queue_id,
			 prio_name(rows[i].priority), rows[i].is_default ? ", default" : "");
		text_line(f, prefix, who, &rows[i].st);
	}
	if (n_retired)
		text_line(f, prefix, "destroyed streams, together", retired);
}

static struct json_object *json_stats(const struct flex_stream_stats *st)
{
	struct json_object *o = json_object_new_object();

#define ADD(field) json_object_object_add(o, #field, json_object_new_uint64(st->field))
	ADD(jobs);
	ADD(tiles);
	ADD(cbs);
	ADD(submits);
	ADD(parked_cbs);
	ADD(host_ops);
	ADD(host_funcs);
	ADD(bytes_dma);
	ADD(synchronizes);
	ADD(sync_ns);
	ADD(corr_slot_bytes);
	ADD(corr_slot_grows);
#undef ADD
	return o;
}

/*
 * JSON: the allocator's report object (parsed back from its writer, so
 * there is one definition of that format) with two members added.
 */
static int write_json(struct flex_context *ctx, FILE *out, const struct stream_row *rows,
		      int n, const struct flex_stream_stats *retired, uint32_t n_retired)
{
	struct json_object *report, *arr, *o;
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;
	int err, i;

	mem = open_memstream(&buf, &len);
	if (!mem)
		return flex_error_set(-ENOMEM, "flex_context_report: out of memory");
	err = flex_alloc_report(ctx->alloc, mem, FLEX_ALLOC_REPORT_JSON);
	fclose(mem);
	if (err) {
		free(buf);
		return err;
	}
	report = json_tokener_parse(buf);
	free(buf);
	if (!report || !json_object_is_type(report, json_type_object)) {
		json_object_put(report);
		return flex_error_set(-EIO, "flex_context_report: the allocator's JSON report did not parse");
	}
	arr = json_object_new_array();
	for (i = 0; i < n; i++) {
		o = json_stats(&rows[i].st);
		json_object_object_add(o, "queue_id", json_object_new_uint64(rows[i].queue_id));
		json_object_object_add(o, "priority",
				       json_object_new_string(prio_name(rows[i].priority)));
		json_object_object_add(o, "default", json_object_new_boolean(rows[i].is_default));
		json_object_array_add(arr, o);
	}
	json_object_object_add(report, "streams", arr);
	o = json_stats(retired);
	json_object_object_add(o, "count", json_object_new_uint64(n_retired));
	json_object_object_add(report, "streams_destroyed", o);
	fputs(json_object_to_json_string_ext(report, JSON_C_TO_STRING_PLAIN), out);
	fputc('\n', out);
	json_object_put(report);
	return 0;
}

FLEX_EXPORT int flex_context_report(struct flex_context *ctx, FILE *out,
				    enum flex_alloc_report_format format)
{
	struct flex_stream_stats retired;
	struct stream_row *rows;
	uint32_t n_retired;
	int n, err;

	if (!ctx || !out || (unsigned int)format > FLEX_ALLOC_REPORT_JSON)
		return flex_error_set(-EINVAL, "flex_context_report: no context or stream, or unknown format %d",
				 (int)format);
	n = snapshot(ctx, &rows, &retired, &n_retired);
	if (n < 0)
		return flex_error_set(n, "flex_context_report: out of memory");
	switch (format) {
	case FLEX_ALLOC_REPORT_SUMMARY:
		err = flex_alloc_report(ctx->alloc, out, format);
		if (!err)
			write_text(out, "", rows, n, &retired, n_retired);
		break;
	case FLEX_ALLOC_REPORT_CSV:
		/* '#' lines: CSV readers skip them, as the allocator's summary lines. */
		err = flex_alloc_report(ctx->alloc, out, format);
		if (!err)
			write_text(out, "# ", rows, n, &retired, n_retired);
		break;
	default:
		err = write_json(ctx, out, rows, n, &retired, n_retired);
		break;
	}
	free(rows);
	if (!err && (fflush(out) || ferror(out)))
		err = flex_error_set(-EIO, "flex_context_report: writing the report failed");
	return err;
}

void flex_context_write_exit_report(struct flex_context *ctx)
{
	const char *p = ctx->report_path;
	size_t len = strlen(p);
	enum flex_alloc_report_format fmt = FLEX_ALLOC_REPORT_SUMMARY;
	FILE *f;

	if (len >= 5 && !strcmp(p + len - 5, ".json"))
		fmt = FLEX_ALLOC_REPORT_JSON;
	else if (len >= 4 && !strcmp(p + len - 4, ".csv"))
		fmt = FLEX_ALLOC_REPORT_CSV;
	f = fopen(p, "a");
	if (!f) {
		fprintf(stderr, "flex: FLEX_REPORT: cannot open %s: %s\n", p, strerror(errno));
		return;
	}
	if (flex_context_report(ctx, f, fmt) | fclose(f))
		fprintf(stderr, "flex: FLEX_REPORT: writing %s failed: %s\n", p,
			flex_last_error());
}
