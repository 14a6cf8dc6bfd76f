/* say.c - how a command speaks: "ember CMD: message" on stderr, the
 * usage errors the option engine finds, and the end by a signal.  Only
 * the command layer prints a command's messages and picks its exit
 * status (tests/tools/layers.sh checks it); the rooms below return -1
 * with err_set() and the command says err_msg(). */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>

#include "cmd/cmd.h"

static void cmd_vprint(const char *cmd, const char *kind, const char *fmt,
		       va_list ap)
{
	char line[2048];
	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "ember %s: %s%s\n", cmd, kind, line);
}

void cmd_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cmd_vprint(cmd, "", fmt, ap);
	va_end(ap);
}

void cmd_warn(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cmd_vprint(cmd, "warning: ", fmt, ap);
	va_end(ap);
}

int cmd_bad(const char *cmd, const char *fix, const char *fmt, ...)
{
	char what[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	cmd_error(cmd, "%s: %s", what, fix);
	return -1;
}

int cmd_said(const char *cmd, int rc)
{
	if (rc < 0)
		cmd_error(cmd, "%s", err_msg());
	return rc;
}

int cmd_bad_option(const char *cmd, int opt, const char *text)
{
	if (opt == ':')
		cmd_error(cmd, "option '%s' needs a value (see 'ember %s --help')", text, cmd);
	else
		cmd_error(cmd, "unknown option '%s' (see 'ember %s --help')", text, cmd);
	return EXIT_USAGE;
}

int cmd_extra_argument(const char *cmd, const char *help, const char *text)
{
	cmd_error(cmd, "unexpected argument '%s' (see 'ember %s --help')", text, help);
	return EXIT_USAGE;
}

void cmd_die_of(int sig)
{
	fflush(NULL);
	signal(sig, SIG_DFL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}
