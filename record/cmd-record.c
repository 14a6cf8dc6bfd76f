/* cmd-record.c - placeholder until the recorder lands. */
#include "common/common.h"
#include "record/record.h"

int cmd_record(int argc, char **argv)
{
	cmd_error("record", "not implemented yet");
	return EXIT_RUNTIME;
}
