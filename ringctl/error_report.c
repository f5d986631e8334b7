/* See error_report.h. The JSON object goes through the writer (one line);
 * plain and keyvalue print the text as it always read. */
#include "error_report.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define ERROR_REPORT_TEXT_MAX 4096

static struct {
	FILE *out;
	enum writer_format fmt;
	const struct help_cmd *cmd;
	const char *group;
	size_t count;
	char notice[ERROR_REPORT_TEXT_MAX]; /* JSON: held for its status */
	char notice_code[32];
} error_report_state = {.fmt = WRITER_PLAIN};

void error_report_setup(FILE *out)
{
	error_report_state.out = out;
}

void error_report_set_format(enum writer_format fmt)
{
	error_report_state.fmt = fmt;
}

enum writer_format error_report_format(void)
{
	return error_report_state.fmt;
}

void error_report_command(const struct help_cmd *cmd, const char *group)
{
	error_report_state.cmd = cmd;
	error_report_state.group = group;
}

size_t error_report_count(void)
{
	return error_report_state.count;
}

static FILE *error_report_out(void)
{
	return error_report_state.out ? error_report_state.out : stderr;
}

/* Plain: the text as it always read, control bytes other than a newline
 * escaped (texts can carry what agents sent). */
static void error_report_plain(FILE *f, const char *text)
{
	fputs("ringctl: ", f);
	for (const char *s = text; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '\n' || (ch >= 0x20 && ch != 0x7f))
			fputc(ch, f);
		else
			fprintf(f, "\\x%02x", ch);
	}
	fputc('\n', f);
	fflush(f);
}

/* JSON: one object on one line. */
static void error_report_json(int status, const char *code, const char *value,
			      const char *fix, const char *text, int usage)
{
	const struct help_cmd *c = error_report_state.cmd;
	const char *group = error_report_state.group;
	struct writer *w = writer_new_line(error_report_out(), WRITER_JSON);
	char buf[2048];

	if (!w)
		return;
	writer_obj_start(w, status >= 2 ? "error" : "notice");
	if (code)
		writer_str(w, "code", code);
	if (value)
		writer_str(w, "value", value);
	if (fix)
		writer_str(w, "fix", fix);
	writer_str(w, "message", text);
	if (c || group)
		writer_str(w, "command", c ? help_cmd_name(c) : group);
	else
		writer_none(w, "command", "");
	if (usage && help_usage_text(c, group, buf, sizeof(buf)) == 0)
		writer_str(w, "usage", buf);
	writer_int(w, "exit_status", status);
	writer_obj_end(w);
	writer_finish(w);
}

static void error_report_emit(int status, const char *code, const char *value,
			      const char *fix, const char *text, int usage)
{
	FILE *f = error_report_out();

	error_report_state.count++;
	if (error_report_state.fmt != WRITER_JSON) {
		error_report_plain(f, text);
		if (usage)
			help_print_usage(f, error_report_state.cmd,
					 error_report_state.group);
		return;
	}
	if (*error_report_state.notice) {
		/* The notice held starts the error's text, as one report. */
		char *all = NULL;

		if (asprintf(&all, "%s\n%s", error_report_state.notice, text) <
		    0)
			all = NULL;
		error_report_state.notice[0] = '\0';
		error_report_json(status, code, value, fix, all ? all : text,
				  usage);
		free(all);
		return;
	}
	error_report_json(status, code, value, fix, text, usage);
}

/* fmt's text into text, empty where it cannot be formatted. */
static void error_report_vtext(char text[ERROR_REPORT_TEXT_MAX],
			       const char *fmt, va_list ap)
{
	if (vsnprintf(text, ERROR_REPORT_TEXT_MAX, fmt, ap) < 0)
		text[0] = '\0';
}

int error_report(int status, const char *code, const char *value,
		 const char *fix, const char *fmt, ...)
{
	char text[ERROR_REPORT_TEXT_MAX];
	va_list ap;

	va_start(ap, fmt);
	error_report_vtext(text, fmt, ap);
	va_end(ap);
	error_report_emit(status, code, value, fix, text, 0);
	return status;
}

int error_report_usage(const char *fmt, ...)
{
	char text[ERROR_REPORT_TEXT_MAX];
	va_list ap;

	va_start(ap, fmt);
	error_report_vtext(text, fmt, ap);
	va_end(ap);
	error_report_emit(2, "usage", NULL, "ringctl help COMMAND", text, 1);
	return 2;
}

void error_report_notice(const char *code, const char *fmt, ...)
{
	char text[ERROR_REPORT_TEXT_MAX];
	va_list ap;

	va_start(ap, fmt);
	error_report_vtext(text, fmt, ap);
	va_end(ap);
	if (error_report_state.fmt != WRITER_JSON) {
		error_report_state.count++;
		error_report_plain(error_report_out(), text);
		return;
	}
	snprintf(error_report_state.notice, sizeof(error_report_state.notice),
		 "%s", text);
	snprintf(error_report_state.notice_code,
		 sizeof(error_report_state.notice_code), "%s",
		 code ? code : "");
}

void error_report_end(int status, const char *text, size_t len)
{
	char *msg, *o;
	const char *p, *end = text + len;

	if (error_report_state.fmt != WRITER_JSON)
		return;
	if (!len && *error_report_state.notice) {
		error_report_state.count++;
		error_report_json(status,
				  *error_report_state.notice_code
					  ? error_report_state.notice_code
					  : NULL,
				  NULL, NULL, error_report_state.notice, 0);
		error_report_state.notice[0] = '\0';
		return;
	}
	if (!len)
		return;
	/* Lines without their "ringctl: " prefixes, joined by newlines. */
	msg = malloc(len + 1);
	if (!msg)
		return;
	o = msg;
	for (p = text; p < end;) {
		if (end - p >= 9 && !strncmp(p, "ringctl: ", 9))
			p += 9;
		while (p < end && *p != '\n')
			*o++ = *p++;
		if (p < end && p + 1 < end)
			*o++ = '\n';
		if (p < end)
			p++;
	}
	*o = '\0';
	error_report_emit(status, NULL, NULL, NULL, msg, 0);
	free(msg);
}
