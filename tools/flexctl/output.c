// SPDX-License-Identifier: GPL-2.0
/*
 * flexctl output: the same json-c objects printed as aligned tables (for
 * people) or as JSON (--json, for scripts). Tables size their columns to
 * the widest cell, right-align numbers, and show byte counts in binary
 * units unless --bytes asks for exact figures.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "flexctl.h"

void out_cell(const struct flexctl *c, struct json_object *row, const struct column *col,
	      char *buf, size_t len)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(row, col->key, &v) || !v) {
		snprintf(buf, len, "-");
		return;
	}
	switch (col->fmt) {
	case COL_STR:
		snprintf(buf, len, "%s", json_object_get_string(v));
		break;
	case COL_INT:
		snprintf(buf, len, "%" PRId64, json_object_get_int64(v));
		break;
	case COL_SIZE:
		if (c->bytes)
			snprintf(buf, len, "%" PRIu64, (uint64_t)json_object_get_int64(v));
		else
			tool_size(buf, len, (uint64_t)json_object_get_int64(v));
		break;
	case COL_HEX:
		snprintf(buf, len, "0x%" PRIx64, (uint64_t)json_object_get_int64(v));
		break;
	case COL_BOOL:
		snprintf(buf, len, "%s", json_object_get_boolean(v) ? "yes" : "no");
		break;
	case COL_RATIO:
		snprintf(buf, len, "%.3f", json_object_get_double(v));
		break;
	case COL_RATE:
		snprintf(buf, len, "%.1f", json_object_get_double(v));
		break;
	}
}

static bool right_aligned(enum col_fmt f)
{
	return f == COL_INT || f == COL_SIZE || f == COL_RATIO || f == COL_RATE;
}

void out_table(const struct flexctl *c, struct json_object *rows, const struct column *cols,
	       size_t ncols)
{
	size_t nrows = json_object_array_length(rows);
	size_t *width = calloc(ncols, sizeof(*width));
	char cell[256];

	if (!width)
		return;
	for (size_t j = 0; j < ncols; j++)
		width[j] = strlen(cols[j].header);
	for (size_t i = 0; i < nrows; i++) {
		for (size_t j = 0; j < ncols; j++) {
			out_cell(c, json_object_array_get_idx(rows, i), &cols[j], cell, sizeof(cell));
			if (strlen(cell) > width[j])
				width[j] = strlen(cell);
		}
	}
	for (size_t j = 0; j < ncols; j++)
		fprintf(c->out, "%s%*s", j ? "  " : "",
			right_aligned(cols[j].fmt) ? (int)width[j] : -(int)width[j], cols[j].header);
	fputc('\n', c->out);
	for (size_t i = 0; i < nrows; i++) {
		for (size_t j = 0; j < ncols; j++) {
			out_cell(c, json_object_array_get_idx(rows, i), &cols[j], cell, sizeof(cell));
			/* No trailing blanks after the last column. */
			if (j == ncols - 1 && !right_aligned(cols[j].fmt))
				fprintf(c->out, "%s%s", j ? "  " : "", cell);
			else
				fprintf(c->out, "%s%*s", j ? "  " : "",
					right_aligned(cols[j].fmt) ? (int)width[j] : -(int)width[j],
					cell);
		}
		fputc('\n', c->out);
	}
	free(width);
}

void out_fields(const struct flexctl *c, struct json_object *obj, const struct column *cols,
		size_t ncols)
{
	size_t w = 0;
	char cell[512];

	for (size_t j = 0; j < ncols; j++)
		if (strlen(cols[j].header) > w)
			w = strlen(cols[j].header);
	for (size_t j = 0; j < ncols; j++) {
		out_cell(c, obj, &cols[j], cell, sizeof(cell));
		fprintf(c->out, "%s:%*s %s\n", cols[j].header,
			(int)(w - strlen(cols[j].header)), "", cell);
	}
}

void out_json(const struct flexctl *c, struct json_object *obj)
{
	fprintf(c->out, "%s\n",
		json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY |
						    JSON_C_TO_STRING_NOSLASHESCAPE));
}
