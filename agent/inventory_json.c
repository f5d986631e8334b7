/* A JSON writer for protobuf-c messages, driven by their descriptors. */
#include "inventory_json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void ij_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	fputc('"', f);
	while (*p) {
		unsigned char c = *p;
		size_t need = 0, k;

		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
			p++;
			continue;
		}
		if (c < 0x20 || c == 0x7f) {
			switch (c) {
			case '\n':
				fputs("\\n", f);
				break;
			case '\t':
				fputs("\\t", f);
				break;
			case '\r':
				fputs("\\r", f);
				break;
			default:
				fprintf(f, "\\u%04x", c);
			}
			p++;
			continue;
		}
		if (c < 0x80) {
			fputc(c, f);
			p++;
			continue;
		}
		/* Multi-byte: copied when it is well-formed UTF-8 (shortest
		 * form, no surrogates), else each byte as its Latin-1 code
		 * point so the output stays valid JSON. */
		if (c >= 0xc2 && c <= 0xdf)
			need = 1;
		else if (c >= 0xe0 && c <= 0xef)
			need = 2;
		else if (c >= 0xf0 && c <= 0xf4)
			need = 3;
		for (k = 1; need && k <= need; k++)
			if ((p[k] & 0xc0) != 0x80)
				need = 0;
		if (need == 2 &&
		    ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0)))
			need = 0;
		if (need == 3 &&
		    ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90)))
			need = 0;
		if (!need) {
			fprintf(f, "\\u%04x", c);
			p++;
			continue;
		}
		fwrite(p, 1, need + 1, f);
		p += need + 1;
	}
	fputc('"', f);
}

static void ij_double(FILE *f, double d)
{
	if (!isfinite(d))
		fputs("null", f);
	else
		fprintf(f, "%.15g", d);
}

static size_t ij_elem_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_ENUM:
		return 4;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return 8;
	case PROTOBUF_C_TYPE_FLOAT:
		return sizeof(float);
	case PROTOBUF_C_TYPE_DOUBLE:
		return sizeof(double);
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	case PROTOBUF_C_TYPE_STRING:
		return sizeof(char *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(ProtobufCMessage *);
	}
	return 0;
}

static void ij_message(FILE *f, const ProtobufCMessage *m);

static void ij_value(FILE *f, const ProtobufCFieldDescriptor *fd, const void *v)
{
	switch (fd->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		fprintf(f, "%" PRId32, *(const int32_t *)v);
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		fprintf(f, "%" PRIu32, *(const uint32_t *)v);
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		fprintf(f, "%" PRId64, *(const int64_t *)v);
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		fprintf(f, "%" PRIu64, *(const uint64_t *)v);
		break;
	case PROTOBUF_C_TYPE_FLOAT:
		ij_double(f, *(const float *)v);
		break;
	case PROTOBUF_C_TYPE_DOUBLE:
		ij_double(f, *(const double *)v);
		break;
	case PROTOBUF_C_TYPE_BOOL:
		fputs(*(const protobuf_c_boolean *)v ? "true" : "false", f);
		break;
	case PROTOBUF_C_TYPE_ENUM: {
		const ProtobufCEnumDescriptor *ed = fd->descriptor;
		const ProtobufCEnumValue *ev =
			ed ? protobuf_c_enum_descriptor_get_value(
				     ed, *(const int *)v)
			   : NULL;

		if (ev)
			ij_string(f, ev->name);
		else
			fprintf(f, "%d", *(const int *)v);
		break;
	}
	case PROTOBUF_C_TYPE_STRING:
		ij_string(f, *(char *const *)v);
		break;
	case PROTOBUF_C_TYPE_BYTES: {
		const ProtobufCBinaryData *b = v;

		fputc('"', f);
		for (size_t i = 0; i < b->len; i++)
			fprintf(f, "%02x", b->data[i]);
		fputc('"', f);
		break;
	}
	case PROTOBUF_C_TYPE_MESSAGE:
		ij_message(f, *(ProtobufCMessage *const *)v);
		break;
	}
}

static void ij_message(FILE *f, const ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *d;
	int first = 1;

	if (!m) {
		fputs("null", f);
		return;
	}
	d = m->descriptor;
	fputc('{', f);
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *fd = &d->fields[i];
		const char *base = (const char *)m;
		const void *member = base + fd->offset;

		if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
			uint32_t which = *(
				const uint32_t *)(base + fd->quantifier_offset);

			if (which != fd->id)
				continue;
		} else if (fd->label == PROTOBUF_C_LABEL_OPTIONAL &&
			   fd->type != PROTOBUF_C_TYPE_MESSAGE &&
			   fd->type != PROTOBUF_C_TYPE_STRING &&
			   !*(const protobuf_c_boolean
				      *)(base + fd->quantifier_offset)) {
			continue;
		}
		if (fd->type == PROTOBUF_C_TYPE_MESSAGE &&
		    fd->label != PROTOBUF_C_LABEL_REPEATED &&
		    !*(ProtobufCMessage *const *)member)
			continue;
		fputs(first ? "" : ",", f);
		first = 0;
		ij_string(f, fd->name);
		fputc(':', f);
		if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n =
				*(const size_t *)(base + fd->quantifier_offset);
			const char *arr = *(char *const *)member;
			size_t sz = ij_elem_size(fd->type);

			fputc('[', f);
			for (size_t k = 0; k < n; k++) {
				if (k)
					fputc(',', f);
				ij_value(f, fd, arr + k * sz);
			}
			fputc(']', f);
		} else {
			ij_value(f, fd, member);
		}
	}
	fputc('}', f);
}

int inventory_json_write(FILE *f, const ProtobufCMessage *m)
{
	if (!f || !m) {
		errno = EINVAL;
		return -1;
	}
	ij_message(f, m);
	fputc('\n', f);
	if (fflush(f) == EOF || ferror(f)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}

char *inventory_json_string(const ProtobufCMessage *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	rc = inventory_json_write(f, m);
	if (fclose(f) == EOF)
		rc = -1;
	if (rc < 0) {
		free(buf);
		errno = ENOMEM;
		return NULL;
	}
	return buf;
}
