/* libFuzzer target: arbitrary bytes as both config files. Checks that the
 * parsers neither crash nor leak, whatever the input. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "agent/agent_conf.h"
#include "cfg.h"
#include "coordinator/coord_conf.h"

static void fuzz_config_silent(const char *msg, void *arg)
{
	(void)msg;
	(void)arg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfg_ctx ctx = {.report = fuzz_config_silent};
	struct coord_conf cc;
	struct agent_conf ac;
	char spec[256], bad[32];

	coord_conf_defaults(&cc);
	coord_conf_load_buffer(&cc, "fuzz.conf", (const char *)data, size,
			       &ctx);
	coord_conf_free(&cc);

	ctx = (struct cfg_ctx){.report = fuzz_config_silent};
	agent_conf_defaults(&ac);
	agent_conf_load_buffer(&ac, "fuzz.conf", (const char *)data, size,
			       &ctx);
	/* Whatever got parsed, the glob users must cope with it. */
	agent_conf_is_data_interface(&ac, "enp1s0f0np0");
	agent_conf_nominal_mbps(&ac, "enP2p1s0f1np1");

	/* The same bytes as a -d list (argv strings end at the first NUL). */
	if (size < sizeof(spec)) {
		memcpy(spec, data, size);
		spec[size] = '\0';
		cfg_debug_check(CFG_DAEMON_AGENT, spec, bad, sizeof(bad));
		cfg_debug_check(CFG_DAEMON_COORDINATOR, spec, bad, sizeof(bad));
	}
	return 0;
}
